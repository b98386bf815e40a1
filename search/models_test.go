package search_test

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/embedding"
	"github.com/papersearch/papersearch/search/searchtest"
)

// TestModelGate: in a store of the three default models, a question whose
// words the papers hold, a search by example and a similar-paper query
// rank exactly as a store of the first two models alone does, with the
// same cosines; a question that paraphrases every word ranks by all
// three, as an engine without the gate does.
func TestModelGate(t *testing.T) {
	gated, papers := sharedSeeded(t)
	ctx := context.Background()
	parts := model.(*embed.Pair).Parts()
	if len(parts) != 3 {
		t.Fatalf("the default model has %d parts, want 3", len(parts))
	}
	all, err := search.NewEngine(shared.store, model, search.Options{ModelGate: &search.ModelGate{}})
	if err != nil {
		t.Fatal(err)
	}
	pairModel := embed.NewPair(parts[0], parts[1])
	pair, _ := searchtest.Engine(t, pairModel, search.Options{})
	if _, err := catalog.New(pair, catalog.Options{}).Ingest(ctx, papers, nil); err != nil {
		t.Fatal(err)
	}

	// cosine is a hit's dense cosine, NaN where it has none.
	cosine := func(h papersearch.Hit) float64 {
		if e := h.Explanation; e != nil && e.DenseScore != nil {
			return float64(*e.DenseScore)
		}
		return math.NaN()
	}
	// ranking is a page's ids with each one's cosine.
	ranking := func(res search.Results) string {
		out := ""
		for _, h := range res.Hits {
			out += fmt.Sprintf("%s %.4f\n", h.ID, cosine(h))
		}
		return out
	}
	// same reports whether two pages hold the same papers in the same order
	// with the same cosines, up to float32 rounding (the three models'
	// vectors and the pair's sum their shares in different orders).
	same := func(a, b search.Results) bool {
		if len(a.Hits) != len(b.Hits) {
			return false
		}
		for i, h := range a.Hits {
			x, y := cosine(h), cosine(b.Hits[i])
			if h.ID != b.Hits[i].ID || math.IsNaN(x) != math.IsNaN(y) || math.Abs(x-y) > 1e-5 {
				return false
			}
		}
		return true
	}
	ask := func(eng *search.Engine, q search.Query) search.Results {
		t.Helper()
		q.Explain, q.Limit = true, 10
		res, err := eng.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	worded := papers[5].Title // a question in the papers' words
	const paraphrased = "teaching a machine to guess how a chain of building blocks folds up in space"
	for _, mode := range []search.Mode{search.Hybrid, search.Dense} {
		q := search.Query{Text: worded, Mode: mode}
		got := ask(gated, q)
		if ev := ask(gated, search.Query{Text: worded}).Evidence; ev == nil || *ev < search.DefaultModelGate.Below {
			t.Fatalf("evidence of %q: %v, want at least %v", worded, deref(ev), search.DefaultModelGate.Below)
		}
		if w := ask(pair, q); !same(got, w) {
			t.Errorf("%s %q: three models gave\n%s, the pair\n%s", mode, worded, ranking(got), ranking(w))
		}

		q.Text = paraphrased
		got = ask(gated, q)
		if ev := ask(gated, search.Query{Text: paraphrased}).Evidence; ev == nil || *ev >= search.DefaultModelGate.Below {
			t.Fatalf("evidence of %q: %v, want under %v", paraphrased, deref(ev), search.DefaultModelGate.Below)
		}
		if w := ask(all, q); !same(got, w) {
			t.Errorf("%s %q: the gate gave\n%s, all three models\n%s", mode, paraphrased, ranking(got), ranking(w))
		}
		if same(got, ask(pair, q)) {
			t.Errorf("%s %q: all three models ranked as the pair does:\n%s", mode, paraphrased, ranking(got))
		}
	}

	// Only the models that compare a question embed it: the third one a
	// weakly evidenced question's alone, the core ones each question once.
	var runs [3]atomic.Int64
	counted := make([]embed.Embedder, len(parts))
	for i, p := range parts {
		counted[i] = countedEmbedder{Embedder: p, texts: &runs[i]}
	}
	lazy, err := search.NewEngine(shared.store, embed.NewPair(counted...), search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		text string
		mode search.Mode
		like []string
		want search.Results // the gated engine's ranking
		runs [3]int64       // each model's texts embedded so far
	}{
		{text: worded, mode: search.Hybrid, runs: [3]int64{1, 1, 0}},
		{text: worded + " again", mode: search.Dense, runs: [3]int64{2, 2, 0}},
		{text: paraphrased, mode: search.Hybrid, runs: [3]int64{3, 3, 1}},
		{text: paraphrased + " again", mode: search.Dense, runs: [3]int64{4, 4, 2}},
		{text: paraphrased, mode: search.Dense, runs: [3]int64{4, 4, 2}}, // remembered
		// With a liked paper every model compares it; the core ones remembered.
		{text: worded, mode: search.Hybrid, like: []string{papers[3].ID}, runs: [3]int64{4, 4, 3}},
	} {
		q := search.Query{Text: c.text, Mode: c.mode, Like: c.like}
		got := ask(lazy, q)
		if w := ask(gated, q); !same(got, w) {
			t.Errorf("%d: %s %q: %s\n, the gated engine's\n%s", i, c.mode, c.text, ranking(got), ranking(w))
		}
		for m := range runs {
			if n := runs[m].Load(); n != c.runs[m] {
				t.Errorf("%d: %s %q: model %d embedded %d texts so far, want %d", i, c.mode, c.text, m, n, c.runs[m])
			}
		}
	}

	// A weakly evidenced question the third model fails to embed is
	// compared by the core models, as the pair compares it.
	failing, err := search.NewEngine(shared.store, embed.NewPair(parts[0], parts[1], failingEmbedder{parts[2].Info()}), search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Its failures are not the embedder's: more of them in a row than the
	// breaker counts (the core models' parts remembered after the first
	// time, so the third model alone is asked) leave the core models
	// comparing every question.
	for range embedding.BreakerFailures + 1 {
		for _, mode := range []search.Mode{search.Hybrid, search.Dense} {
			q := search.Query{Text: paraphrased + " once more", Mode: mode}
			if got, w := ask(failing, q), ask(pair, q); !same(got, w) || len(got.Degraded) > 0 {
				t.Errorf("%s %q with the third model failing: %s (degraded %v)\n, the pair\n%s", mode, q.Text, ranking(got), got.Degraded, ranking(w))
			}
		}
	}
	if q := (search.Query{Text: worded}); len(ask(failing, q).Degraded) > 0 {
		t.Errorf("%q: degraded after the third model failed %d times", worded, 2*(embedding.BreakerFailures+1))
	}

	liked := papers[3].ID
	if g, w := ask(gated, search.Query{Like: []string{liked}}), ask(pair, search.Query{Like: []string{liked}}); !same(g, w) {
		t.Errorf("like %s: three models gave\n%s, the pair\n%s", liked, ranking(g), ranking(w))
	}
	for _, aspect := range []search.Aspect{search.WholePaper, search.MethodAspect} {
		sq := search.SimilarQuery{ID: liked, Aspect: aspect, Limit: 10, Explain: true}
		g, err := gated.Similar(ctx, sq)
		if err != nil {
			t.Fatal(err)
		}
		w, err := pair.Similar(ctx, sq)
		if err != nil {
			t.Fatal(err)
		}
		if !same(g, w) {
			t.Errorf("similar to %s (aspect %q): three models gave\n%s, the pair\n%s", liked, aspect, ranking(g), ranking(w))
		}
		for i := range min(len(g.Hits), len(w.Hits)) {
			if m, n := g.Hits[i].Explanation.SentenceMatch, w.Hits[i].Explanation.SentenceMatch; m != nil && n != nil &&
				math.Abs(float64(m.Similarity-n.Similarity)) > 1e-4 {
				t.Errorf("similar to %s (aspect %q), hit %d: sentence similarity %f, the pair's %f", liked, aspect, i, m.Similarity, n.Similarity)
			}
		}
	}
}

// meanCosine is the mean of the cosine similarities of a query and a
// paper by the first k models of the default model's vectors q and d
// (each model's unit vector scaled by 1/√n, for n models).
func meanCosine(t *testing.T, q, d []float32, k int) float64 {
	t.Helper()
	parts := model.(*embed.Pair).Parts()
	n, from, sum := float64(len(parts)), 0, 0.0
	for _, m := range parts[:k] {
		to := from + m.Info().Dim
		sum += n * float64(embed.Dot(q[from:to], d[from:to]))
		from = to
	}
	return sum / float64(k)
}

// countedEmbedder counts the texts it embeds.
type countedEmbedder struct {
	embed.Embedder
	texts *atomic.Int64
}

func (c countedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts.Add(int64(len(texts)))
	return c.Embedder.Embed(ctx, texts)
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
