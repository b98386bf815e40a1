package search_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
)

// TestExplainEmbedsOnlyTheQuery: an explained search embeds the query and
// nothing else (it used to embed every sentence of every hit again), and
// each hit's best sentence is the one whose stored vector is closest to the
// query's, the vectors aspect similarity matches.
func TestExplainEmbedsOnlyTheQuery(t *testing.T) {
	ctx := context.Background()
	eng, emb, store, papers, err := newSeededEngine(filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := eng.Ingest(ctx, papers, nil); err != nil {
		t.Fatal(err)
	}
	const question = "agents that browse websites and follow their rules on scraping"
	for _, mode := range []search.Mode{search.Hybrid, search.Dense, search.Lexical} {
		before := emb.count()
		res, err := eng.Search(ctx, search.Query{Text: question + " " + string(mode), Mode: mode, Limit: 10, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		want := 1
		if mode == search.Lexical {
			want = 0
		}
		if got := emb.count() - before; got != want {
			t.Errorf("%s: an explained search of %d hits embedded %d texts, want %d (the query)", mode, len(res.Hits), got, want)
		}
		for _, h := range res.Hits {
			if h.Explanation == nil || h.Explanation.BestSentence == "" {
				t.Fatalf("%s: hit %s has no best sentence: %+v", mode, h.ID, h.Explanation)
			}
		}
	}

	// The best sentence is the stored one nearest the query vector (the
	// engine's query embedder is the counting one, instructed).
	qv, err := embed.Instructed(emb, embed.Query).Embed(ctx, []string{question})
	if err != nil {
		t.Fatal(err)
	}
	res, err := eng.Search(ctx, search.Query{Text: question, Mode: search.Dense, Limit: 5, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Hits {
		doc, err := store.Get(ctx, h.ID)
		if err != nil {
			t.Fatal(err)
		}
		ss := papersearch.Sentences(h.Paper.Abstract)
		best, bestScore := "", float32(-2)
		for i, s := range doc.Sentences {
			if d := embed.Dot(qv[0], s.Vector); d > bestScore {
				best, bestScore = ss[i], d
			}
		}
		if h.Explanation.BestSentence != best {
			t.Errorf("hit %s: best sentence %q, want the stored vector's nearest %q", h.ID, h.Explanation.BestSentence, best)
		}
	}
}
