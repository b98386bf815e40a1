package qdrant

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"math"
	"path/filepath"
	"testing"
	"time"

	qc "github.com/qdrant/go-client/qdrant"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/sqlite"
	"github.com/papersearch/papersearch/search/storage"
	"github.com/papersearch/papersearch/search/storetest"
)

// TestQdrantLexicalRanksLikeEmbedded pins the lexical side on a six-shard
// collection to the embedded store's: the same 600 real abstracts in both,
// and for 40 queries (titles of other papers, and one long abstract, which
// is pruned to its most informative terms) the same papers in the same
// order with the same BM25 scores. Qdrant's own IDF, computed per shard,
// made ranks depend on how points fell across shards.
func TestQdrantLexicalRanksLikeEmbedded(t *testing.T) {
	url := qdrantURL(t)
	ctx := context.Background()
	papers := testenv.MLPapers(t, 0)
	corpus, queries := papers[:600], papers[600:640]
	suffix := make([]byte, 4)
	rand.Read(suffix)
	name := "test_six_shards_" + hex.EncodeToString(suffix)
	q, err := Open(ctx, Config{URL: url, Collection: name, Shards: 6}, hashModel)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { q.Drop(context.Background()); q.Close() }()
	e, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "papers.db"), hashModel)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	docs := make([]storage.Document, len(corpus))
	for i, p := range corpus {
		fp := storage.FingerprintOf(p)
		docs[i] = storage.Document{Paper: p, Vector: hashVector(p.ID), TextHash: fp.TextHash, PaperHash: fp.PaperHash}
	}
	for _, s := range []storage.Store{q, e} {
		for i := 0; i < len(docs); i += 100 {
			if err := s.Upsert(ctx, docs[i:i+100]); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.RefreshLexical(ctx); err != nil {
			t.Fatal(err)
		}
	}
	texts := []string{corpus[7].Text()}
	for _, p := range queries {
		texts = append(texts, p.Title)
	}
	for _, text := range texts {
		terms := lexical.Analyze(text)
		want, err := e.Lexical(ctx, terms, 10, papersearch.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := q.Lexical(ctx, terms, 10, papersearch.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.Ideal-want.Ideal) > 1e-6*want.Ideal || len(got.Candidates) != len(want.Candidates) {
			t.Fatalf("%.40q: ideal %g with %d candidates, embedded %g with %d", text, got.Ideal, len(got.Candidates),
				want.Ideal, len(want.Candidates))
		}
		if len(got.Terms) != len(want.Terms) || len(want.Terms) == 0 {
			t.Fatalf("%.40q: %d weighted terms, embedded %d", text, len(got.Terms), len(want.Terms))
		}
		for i, w := range want.Terms {
			if g := got.Terms[i]; g.Term != w.Term || math.Abs(g.Weight-w.Weight) > 1e-9*w.Weight {
				t.Errorf("%.40q term %d: %+v, embedded %+v", text, i, g, w)
			}
		}
		for i, w := range want.Candidates {
			g := got.Candidates[i]
			// Scores agree to float32 rounding; a tie may order either way.
			if math.Abs(float64(g.Score-w.Score)) > 1e-4*float64(w.Score) {
				t.Errorf("%.40q rank %d: %s %.5f, embedded %s %.5f", text, i+1, g.ID, g.Score, w.ID, w.Score)
				break
			}
			if g.ID != w.ID && (i+1 == len(want.Candidates) || want.Candidates[i+1].Score < w.Score-1e-4*w.Score) &&
				(i == 0 || want.Candidates[i-1].Score > w.Score+1e-4*w.Score) {
				t.Errorf("%.40q rank %d: %s, embedded %s (scores %.5f, %.5f)", text, i+1, g.ID, w.ID, g.Score, w.Score)
			}
		}
	}
}

// TestQdrantSeesOtherWritersTerms: a store opened before another process
// wrote to its collection weighs query terms with the other's documents
// once an exact count shows the collection changed.
func TestQdrantSeesOtherWritersTerms(t *testing.T) {
	a := openTestQdrant(t, storetest.Model)
	ctx := context.Background()
	b, err := Open(ctx, Config{URL: qdrantURL(t), Collection: a.Collection()}, storetest.Model)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	d := storetest.Doc(1)
	d.Paper.Abstract = "Gradient clipping stabilises recurrent networks."
	if err := a.Upsert(ctx, []storage.Document{d, storetest.Doc(2), storetest.Doc(3)}); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Count(ctx); err != nil || n != 3 {
		t.Fatalf("b counts %d (%v), want 3", n, err)
	}
	m, err := b.Lexical(ctx, lexical.Analyze("gradient clipping"), 5, papersearch.Filter{})
	if err != nil || len(m.Candidates) != 1 || m.Candidates[0].ID != "p001" {
		t.Errorf("b's lexical after a's writes: %+v, %v; want p001", m.Candidates, err)
	}
	want, _ := a.Lexical(ctx, lexical.Analyze("gradient clipping"), 5, papersearch.Filter{})
	if math.Abs(m.Ideal-want.Ideal) > 1e-9 || len(want.Candidates) != 1 ||
		math.Abs(float64(m.Candidates[0].Score-want.Candidates[0].Score)) > 1e-5 {
		t.Errorf("b weighs %+v (ideal %g), a %+v (ideal %g)", m.Candidates, m.Ideal, want.Candidates, want.Ideal)
	}
}

// TestQdrantTurnsOffItsIDF: a collection from before papersearch weighed
// query terms itself (Qdrant's IDF modifier on) has it turned off when
// opened, so idf is not applied twice.
func TestQdrantTurnsOffItsIDF(t *testing.T) {
	q := openTestQdrant(t, storetest.Model)
	ctx := context.Background()
	err := q.client.UpdateCollection(ctx, &qc.UpdateCollection{CollectionName: q.Collection(),
		SparseVectorsConfig: qc.NewSparseVectorsConfig(map[string]*qc.SparseVectorParams{
			qdrantSparse: {Modifier: qc.Modifier_Idf.Enum()},
		})})
	if err != nil {
		t.Fatal(err)
	}
	modifier := func() qc.Modifier {
		info, err := q.client.GetCollectionInfo(ctx, q.Collection())
		if err != nil {
			t.Fatal(err)
		}
		return sparseParams(info).GetModifier()
	}
	holdsFor3s(t, "modifier Idf", func() bool { return modifier() == qc.Modifier_Idf })
	again, err := Open(ctx, Config{URL: qdrantURL(t), Collection: q.Collection()}, storetest.Model)
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	// On a cluster under load the collection's config was seen to show the
	// old modifier again for a while after the change was visible: wait
	// for it to settle, as a reader would.
	for deadline := time.Now().Add(30 * time.Second); modifier() != qc.Modifier_None; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("30 s after opening: modifier %v, want None", modifier())
		}
	}
}
