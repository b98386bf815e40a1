package search_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/searchtest"
	"github.com/papersearch/papersearch/search/storage"
)

// TestPagingPast1000 pages a question over 2,000 real ML papers (hash
// vectors, so every paper is a dense candidate, and words most abstracts
// hold, so over 1,000 are lexical ones) to the end through the engine, in
// the page sizes that had gone past 1,000 in hybrid mode (30 gave 1,020
// results, 37 1,036, 64 1,024, 99 1,089) and those that had not: in every
// mode and under a filter, the pages put together are the first 1,000
// results asked at once (ids, order, ranks and scores), and stop there.
// So are a paper's similar papers. TestEveryPageSizeCutsOneRanking checks
// every size from 1 to 100 on the ranking itself.
func TestPagingPast1000(t *testing.T) {
	ctx := context.Background()
	const dim = 32
	papers := testenv.MLPapers(t, 2000)
	eng, store := searchtest.Engine(t, hashvec.Embedder{Model: embed.ModelInfo{Name: "hash", Dim: dim}}, search.Options{})
	docs := make([]storage.Document, len(papers))
	for i, p := range papers {
		docs[i] = storage.Document{Paper: p, Vector: hashvec.Of(p.ID, dim)}
	}
	if err := store.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	const question = "attention mechanisms in transformer models"
	lex, err := store.Lexical(ctx, lexical.Analyze(question), len(papers), papersearch.Filter{})
	if err != nil || len(lex.Candidates) <= search.MaxSeen {
		t.Fatalf("%d lexical candidates, %v; the test needs more than %d", len(lex.Candidates), err, search.MaxSeen)
	}
	for _, q := range []search.Query{
		{Text: question, Mode: search.Hybrid},
		{Text: question, Mode: search.Dense},
		{Text: question, Mode: search.Lexical},
		// The 1,031 papers of 2022: the dense side alone passes 1,000.
		{Text: question, Mode: search.Hybrid, Filter: papersearch.Filter{YearMin: 2022}},
	} {
		t.Run(fmt.Sprintf("%s from %d", q.Mode, q.Filter.YearMin), func(t *testing.T) {
			want, err := eng.SearchAtOnce(ctx, q, search.MaxSeen)
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Hits) != search.MaxSeen {
				t.Fatalf("asked at once: %d results, want %d", len(want.Hits), search.MaxSeen)
			}
			for _, size := range []int{30, 37, 50, 64, 99, search.MaxLimit} {
				q := q
				q.Limit = size
				if n, err := pagedLike(size, want.Hits, func(cursor string) (search.Results, error) {
					q.Cursor = cursor
					return eng.Search(ctx, q)
				}); err != nil {
					t.Errorf("pages of %d, after %d results: %v", size, n, err)
				}
			}
		})
	}
	// A paper's similar papers are cut from one ranking the same way:
	// pages of 37 and 64 are those of 100.
	similar := func(size int) func(string) (search.Results, error) {
		return func(cursor string) (search.Results, error) {
			return eng.Similar(ctx, search.SimilarQuery{ID: papers[0].ID, Limit: size, Cursor: cursor})
		}
	}
	var want []papersearch.Hit
	for cursor := ""; ; {
		res, err := similar(search.MaxLimit)(cursor)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, res.Hits...)
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	if len(want) != search.MaxSeen {
		t.Fatalf("similar papers in pages of 100: %d, want %d", len(want), search.MaxSeen)
	}
	for _, size := range []int{37, 64} {
		if n, err := pagedLike(size, want, similar(size)); err != nil {
			t.Errorf("similar papers in pages of %d, after %d: %v", size, n, err)
		}
	}
}

// pagedLike reads the pages that page returns from the first (cursor "")
// to the last, each no longer than size, and checks that they hold want in
// its order, ranks and scores, and nothing more; it returns how many
// results came before the first that did not.
func pagedLike(size int, want []papersearch.Hit, page func(cursor string) (search.Results, error)) (int, error) {
	n, cursor := 0, ""
	for {
		res, err := page(cursor)
		if err != nil {
			return n, err
		}
		if len(res.Hits) == 0 || len(res.Hits) > size {
			return n, fmt.Errorf("a page of %d results", len(res.Hits))
		}
		for _, h := range res.Hits {
			if n == len(want) {
				return n, fmt.Errorf("%s after the %d results wanted", h.ID, len(want))
			}
			if w := want[n]; h.ID != w.ID || h.Rank != w.Rank || h.Score != w.Score {
				return n, fmt.Errorf("%s ranked %d scored %g; want %s ranked %d scored %g", h.ID, h.Rank, h.Score, w.ID, w.Rank, w.Score)
			}
			n++
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	if n != len(want) {
		return n, fmt.Errorf("pages stopped at %d results, want %d", n, len(want))
	}
	return n, nil
}
