package qdrant

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/sqlite"
)

// TestQdrantAspectRankingsMatchEmbedded: the same papers in both stores
// give the same aspect rankings (the embedded store keeps sentence vectors
// as int8 codes, Qdrant as float32, so only the order is compared).
func TestQdrantAspectRankingsMatchEmbedded(t *testing.T) {
	ctx := context.Background()
	emb := hashvec.Embedder{Model: embed.ModelInfo{Name: "hash-test", Dim: 64}}
	papers := testenv.MLPapers(t, 80)
	q := openTestQdrant(t, emb.Info())
	lite, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "p.db"), emb.Info())
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	var engines []*search.Engine
	for _, s := range []search.Store{lite, q} {
		eng, err := search.NewEngine(s, emb, search.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := eng.Ingest(ctx, papers, nil); err != nil {
			t.Fatal(err)
		}
		engines = append(engines, eng)
	}
	compared := 0
	for _, p := range papers[:12] {
		for _, aspect := range []search.Aspect{search.BackgroundAspect, search.MethodAspect} {
			var ranked [2][]string
			for i, eng := range engines {
				res, err := eng.Similar(ctx, search.SimilarQuery{ID: p.ID, Aspect: aspect, Limit: 5})
				if errors.Is(err, search.ErrNotFound) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				for _, h := range res.Hits {
					ranked[i] = append(ranked[i], h.ID)
				}
			}
			if ranked[0] == nil {
				continue
			}
			compared++
			if !slices.Equal(ranked[0], ranked[1]) {
				t.Errorf("%s by %s: embedded %v, qdrant %v", p.ID, aspect, ranked[0], ranked[1])
			}
		}
	}
	if compared < 12 {
		t.Errorf("only %d aspect queries compared", compared)
	}
}
