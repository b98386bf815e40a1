package search_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
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
	if _, err := catalog.New(eng, catalog.Options{}).Ingest(ctx, papers, nil); err != nil {
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
	// model's, instructed) by the models that compared the question: its
	// words are the papers', so the first two (search.ModelGate).
	qv, err := embed.Instructed(model, embed.Query).Embed(ctx, []string{question})
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
			if d := float32(meanCosine(t, qv[0], s.Vector, search.DefaultModelGate.Core)); d > bestScore {
				best, bestScore = ss[i], d
			}
		}
		if h.Explanation.BestSentence != best {
			t.Errorf("hit %s: best sentence %q, want the stored vector's nearest %q", h.ID, h.Explanation.BestSentence, best)
		}
	}
}

// TestMatchedTermsLeaveOutFunctionWords: "from" and "we" match many
// abstracts but explain nothing; an explanation names the words that do.
func TestMatchedTermsLeaveOutFunctionWords(t *testing.T) {
	ctx := context.Background()
	eng, _ := sharedSeeded(t)
	res, err := eng.Search(ctx, search.Query{Text: "what we learn from expert value functions", Limit: 3, Explain: true, Mode: search.Lexical})
	if err != nil || len(res.Hits) == 0 {
		t.Fatal(res, err)
	}
	for _, h := range res.Hits {
		for _, w := range h.Explanation.MatchedTerms {
			if w == "from" || w == "we" || w == "what" {
				t.Errorf("hit %s explained by the function word %q: %v", h.ID, w, h.Explanation.MatchedTerms)
			}
		}
	}
	if !slices.Contains(res.Hits[0].Explanation.MatchedTerms, "expert") {
		t.Errorf("first hit's matched terms %v lack expert", res.Hits[0].Explanation.MatchedTerms)
	}
}

// TestEvidenceSaysWhenNoPaperSharesTheWords: a nonsense query has no
// lexical evidence (its results are only the nearest by meaning); a
// question in the papers' words has much; similar-paper results carry
// none.
func TestEvidenceSaysWhenNoPaperSharesTheWords(t *testing.T) {
	ctx := context.Background()
	eng, papers := sharedSeeded(t)
	nonsense, err := eng.Search(ctx, search.Query{Text: "zzzzqqq"})
	if err != nil || nonsense.Evidence == nil || *nonsense.Evidence != 0 || len(nonsense.Hits) == 0 {
		t.Errorf("zzzzqqq: evidence %v, %d hits, %v", nonsense.Evidence, len(nonsense.Hits), err)
	}
	real, err := eng.Search(ctx, search.Query{Text: "brain signal foundation models and hand-crafted features"})
	if err != nil || real.Evidence == nil || *real.Evidence < 0.5 {
		t.Errorf("a question in the papers' words: evidence %v, %v", real.Evidence, err)
	}
	if sim, err := eng.Similar(ctx, search.SimilarQuery{ID: papers[0].ID}); err != nil || sim.Evidence != nil {
		t.Errorf("similar: evidence %v, %v", sim.Evidence, err)
	}
}
