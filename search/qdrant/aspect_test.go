package qdrant

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/sqlite"
	"github.com/papersearch/papersearch/search/storage"
)

// TestQdrantAspectRankingsMatchEmbedded: the same papers in both stores
// give the same aspect rankings, by sentence matches alone and fused with
// BM25. The embedded store keeps sentence vectors
// as int8 codes and Qdrant as float32, so two papers whose scores differ
// by less than the codes' error (aspectTie) may trade places.
func TestQdrantAspectRankingsMatchEmbedded(t *testing.T) {
	ctx := context.Background()
	emb := hashvec.Embedder{Model: embed.ModelInfo{Name: "hash-test", Dim: 64}}
	papers := testenv.MLPapers(t, 80)
	// One shard, so that BM25 statistics are the collection's, as the
	// embedded store's are (docs/ranking.md, "Shards and IDF").
	q := openTestQdrantConfig(t, emb.Info(), Config{Shards: 1})
	lite, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "p.db"), emb.Info())
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	var engines []*search.Engine
	for _, s := range []storage.Store{lite, q} {
		eng, err := search.NewEngine(s, emb, search.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := catalog.New(eng, catalog.Options{}).Ingest(ctx, papers, nil); err != nil {
			t.Fatal(err)
		}
		engines = append(engines, eng)
	}
	const aspectTie = 0.01
	compared, exact := 0, 0
	for n, p := range papers[:12] {
		for _, aspect := range []search.Aspect{search.BackgroundAspect, search.MethodAspect} {
			// Sentence matches alone, and fused with BM25 (the default),
			// by turns.
			mode := []search.Mode{search.Dense, search.Hybrid}[n%2]
			var hits [2][]papersearch.Hit
			for i, eng := range engines {
				res, err := eng.Similar(ctx, search.SimilarQuery{ID: p.ID, Aspect: aspect, Limit: 8, Explain: true, Mode: mode})
				if errors.Is(err, storage.ErrNotFound) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				hits[i] = res.Hits
			}
			if hits[0] == nil {
				continue
			}
			compared++
			embedded := map[string]float64{}
			for _, h := range hits[0] {
				embedded[h.ID] = h.Score
			}
			// The first result is explained by a pair as similar (the same
			// pair, but for ties).
			if e, q := hits[0][0], hits[1][0]; e.ID == q.ID {
				em, qm := e.Explanation.SentenceMatch, q.Explanation.SentenceMatch
				if em == nil || qm == nil || math.Abs(float64(em.Similarity-qm.Similarity)) > aspectTie || qm.Result.Text == "" {
					t.Errorf("%s by %s, %s: first result explained by %+v embedded, %+v qdrant", p.ID, aspect, mode, em, qm)
				}
			}
			same := true
			for i := range 5 {
				e, q := hits[0][i], hits[1][i]
				if e.ID == q.ID {
					continue
				}
				same = false
				// Another paper here only if the embedded store scored it
				// within a tie of this place's.
				if s, ok := embedded[q.ID]; !ok || math.Abs(s-e.Score) > aspectTie {
					t.Errorf("%s by %s, %s, place %d: embedded %s (%.4f), qdrant %s (embedded score %.4f, found %v)",
						p.ID, aspect, mode, i+1, e.ID, e.Score, q.ID, s, ok)
				}
			}
			if same {
				exact++
			}
		}
	}
	t.Logf("%d aspect rankings compared, %d identical in the top 5, the rest differing by ties under %.2f", compared, exact, aspectTie)
	if compared < 12 {
		t.Errorf("only %d aspect queries compared", compared)
	}
}
