package search_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/searchtest"
	"github.com/papersearch/papersearch/search/storage"
)

// TestSimilarByAspect: with the method aspect the paper using the same
// method on another problem comes first; with the background aspect the
// paper on the same problem; the explanation names the matched pair; the
// chosen sentences are compared when named; bad requests are refused.
func TestSimilarByAspect(t *testing.T) {
	ctx := context.Background()
	eng, _ := searchtest.Engine(t, &searchtest.Recorder{Name: "test-model"}, search.Options{})
	const (
		problem = "Predicting how proteins fold remains a central open problem in biology."
		method  = "We propose a graph neural network with attention over residue contacts, trained with a contrastive loss."
	)
	papers := []papersearch.Paper{
		{ID: "query", Title: "Folding with graph attention", Abstract: problem + " " + method +
			" Experiments show that our model improves accuracy by 5 points over the previous best results."},
		{ID: "same-method", Title: "Traffic with graph attention", Abstract: "Forecasting road traffic is important for planning cities. " +
			method + " Results show that errors drop by 12% on two benchmarks."},
		{ID: "same-problem", Title: "Folding with forests", Abstract: problem +
			" We train random forests on hand-made features of each residue pair. Experiments show that the forests are fast but less accurate."},
		{ID: "other", Title: "Sorting", Abstract: "Sorting is a basic task in computing. We present a new merge procedure. Results show that it is twice as fast."},
	}
	if _, err := catalog.New(eng, catalog.Options{}).Ingest(ctx, papers, nil); err != nil {
		t.Fatal(err)
	}
	first := func(sq search.SimilarQuery) papersearch.Hit {
		t.Helper()
		sq.ID, sq.Explain = "query", true
		res, err := eng.Similar(ctx, sq)
		if err != nil {
			t.Fatalf("%+v: %v", sq, err)
		}
		if len(res.Hits) != 3 {
			t.Fatalf("%+v: %d hits", sq, len(res.Hits))
		}
		return res.Hits[0]
	}
	h := first(search.SimilarQuery{Aspect: search.MethodAspect})
	m := h.Explanation.SentenceMatch
	if h.ID != "same-method" || m == nil || m.Query.Text != method || m.Result.Text != method || m.Query.Role != "method" ||
		m.Result.Index != 1 || m.Similarity < 0.99 {
		t.Errorf("method aspect: first %s, match %+v", h.ID, m)
	}
	if h := first(search.SimilarQuery{Aspect: search.BackgroundAspect}); h.ID != "same-problem" ||
		h.Explanation.SentenceMatch.Result.Text != problem {
		t.Errorf("background aspect: first %s, match %+v", h.ID, h.Explanation.SentenceMatch)
	}
	// The mode: sentence matches alone (dense), the same candidates' BM25
	// for the words of the method sentences alone (lexical), or both fused
	// (hybrid); the explanation says which ranked each paper.
	for _, tc := range []struct {
		mode          search.Mode
		dense, byWord bool
	}{
		{search.Dense, true, false},
		{search.Lexical, false, true},
		{search.Hybrid, true, true},
	} {
		res, err := eng.Similar(ctx, search.SimilarQuery{ID: "query", Aspect: search.MethodAspect, Mode: tc.mode, Explain: true})
		if err != nil || len(res.Hits) != 3 {
			t.Fatalf("%s: %d hits, %v", tc.mode, len(res.Hits), err)
		}
		for i, h := range res.Hits {
			ex := h.Explanation
			if (ex.DenseRank > 0) != tc.dense || (ex.LexicalRank > 0) != tc.byWord || ex.SentenceMatch == nil {
				t.Errorf("%s: hit %d %s explained %+v", tc.mode, i, h.ID, ex)
			}
		}
		if ex := res.Hits[0].Explanation; res.Hits[0].ID != "same-method" || ex.SentenceMatch.Result.Text != method {
			t.Errorf("%s: first %s, explained %+v", tc.mode, res.Hits[0].ID, ex)
		}
	}
	if h := first(search.SimilarQuery{Sentences: []int{0}}); h.ID != "same-problem" {
		t.Errorf("sentences=0: first %s", h.ID)
	}
	if h := first(search.SimilarQuery{Sentences: []int{1}}); h.ID != "same-method" {
		t.Errorf("sentences=1: first %s", h.ID)
	}
	// In a search: like a paper by an aspect, or free text matched with
	// papers' sentences of the aspect.
	res, err := eng.Search(ctx, search.Query{Like: []string{"query"}, Aspect: search.MethodAspect, Explain: true})
	if err != nil || len(res.Hits) != 3 || res.Hits[0].ID != "same-method" || res.Hits[0].Explanation.SentenceMatch.Query.Text != method {
		t.Errorf("search like query by method: %+v, %v", res.Hits, err)
	}
	res, err = eng.Search(ctx, search.Query{Text: problem, Aspect: search.BackgroundAspect, Explain: true})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].Explanation.SentenceMatch.Result.Text != problem ||
		res.Hits[0].Explanation.SentenceMatch.Query.Role != "query" {
		t.Errorf("search by background text: %+v, %v", res.Hits, err)
	}
	if _, err := eng.Search(ctx, search.Query{Like: []string{"nope"}, Aspect: search.MethodAspect}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("search like an unknown paper by aspect: %v", err)
	}
	if _, err := eng.Search(ctx, search.Query{Text: "x", Aspect: "style"}); !errors.Is(err, search.ErrInvalidQuery) {
		t.Errorf("search with a bad aspect: %v", err)
	}

	// Pages: a cursor goes on with the next of the same ranking.
	whole, err := eng.Similar(ctx, search.SimilarQuery{ID: "query", Aspect: search.MethodAspect, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	page, err := eng.Similar(ctx, search.SimilarQuery{ID: "query", Aspect: search.MethodAspect, Limit: 2})
	if err != nil || page.NextCursor == "" {
		t.Fatalf("first page: %v, cursor %q", err, page.NextCursor)
	}
	next, err := eng.Similar(ctx, search.SimilarQuery{ID: "query", Aspect: search.MethodAspect, Limit: 2, Cursor: page.NextCursor})
	if err != nil || len(next.Hits) != 1 || next.Hits[0].ID != whole.Hits[2].ID || next.Hits[0].Rank != 3 {
		t.Errorf("second page: %+v, %v; want %s at rank 3", next.Hits, err, whole.Hits[2].ID)
	}
	if _, err := eng.Similar(ctx, search.SimilarQuery{ID: "query", Aspect: search.BackgroundAspect, Cursor: page.NextCursor}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a method cursor for a background query: %v", err)
	}
	for _, sq := range []search.SimilarQuery{
		{ID: "query", Aspect: "style"},
		{ID: "query", Sentences: []int{-1}},
		{ID: "query", Sentences: []int{storage.MaxSentences}},
	} {
		if _, err := eng.Similar(ctx, sq); !errors.Is(err, search.ErrInvalidQuery) {
			t.Errorf("%+v: err = %v, want ErrInvalidQuery", sq, err)
		}
	}
	for _, sq := range []search.SimilarQuery{
		{ID: "nope", Aspect: search.MethodAspect},
		{ID: "query", Sentences: []int{0, 7}}, // it has three
	} {
		if _, err := eng.Similar(ctx, sq); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("%+v: err = %v, want ErrNotFound", sq, err)
		}
	}
}

// ingestLonePaper stores "lone", a paper of one sentence (so it lacks at
// least two aspects), and two others.
func ingestLonePaper(t *testing.T, eng *search.Engine) {
	t.Helper()
	papers := []papersearch.Paper{
		{ID: "lone", Title: "One sentence", Abstract: "We propose a graph attention network for protein folding."},
		{ID: "b", Title: "Graphs", Abstract: "Graph attention networks learn over molecules. Results show gains."},
		{ID: "c", Title: "Sorting", Abstract: "Sorting is a basic task in computing. We present a new merge procedure."},
	}
	if _, err := catalog.New(eng, catalog.Options{}).Ingest(context.Background(), papers, nil); err != nil {
		t.Fatal(err)
	}
}

// TestSimilarByAspectWithoutSuchSentence: a paper with no sentence of the
// aspect asked for is answered by whole-paper similarity, marked
// degraded "aspect", instead of 404; so a client asking by aspect always
// gets an answer.
func TestSimilarByAspectWithoutSuchSentence(t *testing.T) {
	ctx := context.Background()
	eng, _ := searchtest.Engine(t, &searchtest.Recorder{Name: "test-model"}, search.Options{})
	ingestLonePaper(t, eng)
	whole, err := eng.Similar(ctx, search.SimilarQuery{ID: "lone"})
	if err != nil {
		t.Fatal(err)
	}
	degraded := 0
	for _, aspect := range []search.Aspect{search.BackgroundAspect, search.MethodAspect, search.ResultAspect} {
		res, err := eng.Similar(ctx, search.SimilarQuery{ID: "lone", Aspect: aspect})
		if err != nil {
			t.Fatalf("%s: %v", aspect, err)
		}
		if len(res.Degraded) == 0 {
			continue // the paper's one sentence has this role
		}
		degraded++
		if res.Degraded[0] != "aspect" || len(res.Hits) != len(whole.Hits) || res.Hits[0].ID != whole.Hits[0].ID || res.Hits[0].Score != whole.Hits[0].Score {
			t.Errorf("%s: %+v degraded %v; want the whole-paper answer %+v", aspect, res.Hits, res.Degraded, whole.Hits)
		}
	}
	if degraded < 2 {
		t.Errorf("%d aspects answered as a whole; a paper of one sentence lacks at least two", degraded)
	}
}

// TestSearchByAspectLikingAPaperWithoutSuchSentence: a search by aspect
// liking a paper with no sentence of that aspect matches the paper as a
// whole, says so (degraded "aspect") and answers, instead of 404.
func TestSearchByAspectLikingAPaperWithoutSuchSentence(t *testing.T) {
	ctx := context.Background()
	eng, _ := searchtest.Engine(t, &searchtest.Recorder{Name: "test-model"}, search.Options{})
	ingestLonePaper(t, eng)
	degraded := 0
	for _, aspect := range []search.Aspect{search.BackgroundAspect, search.MethodAspect, search.ResultAspect} {
		res, err := eng.Search(ctx, search.Query{Like: []string{"lone"}, Aspect: aspect, Limit: 5})
		if err != nil {
			t.Fatalf("%s: %v", aspect, err)
		}
		if len(res.Hits) != 2 || slices.ContainsFunc(res.Hits, func(h papersearch.Hit) bool { return h.ID == "lone" }) {
			t.Errorf("%s: hits %+v, want the two other papers", aspect, res.Hits)
		}
		if slices.Contains(res.Degraded, "aspect") {
			degraded++
		}
	}
	if degraded < 2 {
		t.Errorf("%d aspects answered as a whole; a paper of one sentence lacks at least two", degraded)
	}
}
