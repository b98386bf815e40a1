package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/storage"
)

// pagingCorpus returns n papers of three sentences each, drawn from a small
// vocabulary so that a query's words match many of them at many scores.
func pagingCorpus(n int) []papersearch.Paper {
	words := strings.Fields("graph neural network molecule protein language model vision transformer " +
		"reinforcement agent policy reward diffusion image sampling theory bound convex gradient " +
		"optimization kernel attention memory retrieval benchmark robust adversarial causal inference")
	r := rand.New(rand.NewPCG(3, 5))
	sentence := func() string {
		k := 4 + r.IntN(6)
		ws := make([]string, k)
		for i := range ws {
			ws[i] = words[r.IntN(len(words))]
		}
		return strings.ToUpper(ws[0][:1]) + strings.Join(ws, " ")[1:] + "."
	}
	papers := make([]papersearch.Paper, n)
	for i := range papers {
		papers[i] = papersearch.Paper{ID: fmt.Sprintf("q%03d", i), Title: sentence(), Year: 2000 + i%25,
			Abstract: sentence() + " We propose " + sentence() + " Results show " + sentence()}
	}
	return papers
}

// pagesAreOneRanking checks, through an engine over s, that the pages of a
// query put together are the query asked at once, for pages of any size:
// the same ids in the same order with the same ranks and scores, in every
// mode, for search, similar and similar by sentences, within the first
// candidates and past them.
func pagesAreOneRanking(t *testing.T, s storage.Store) {
	ctx := context.Background()
	eng, err := search.NewEngine(s, hashvec.Embedder{Model: Model}, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	papers := pagingCorpus(260)
	if _, err := catalog.New(eng, catalog.Options{}).Ingest(ctx, papers, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range pagedQueries(ctx, eng, papers[7].ID) {
		t.Run(c.name, func(t *testing.T) {
			// Within the first candidates: one page of 40 against pages of 1, 5 and 7.
			one, err := c.ask(40, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(one.Hits) != 40 {
				t.Fatalf("one page of 40 holds %d hits", len(one.Hits))
			}
			for _, size := range []int{1, 5, 7} {
				sameHits(t, fmt.Sprintf("pages of %d", size), askPages(t, c.ask, size, 40), one.Hits)
			}
			// Past them: the whole ranking in pages of 100 against pages of 30.
			whole := askPages(t, c.ask, 100, len(papers))
			if len(whole) <= 150 {
				t.Fatalf("pages of 100 end after %d hits, short of the corpus's %d", len(whole), len(papers))
			}
			sameHits(t, "pages of 30 against pages of 100", askPages(t, c.ask, 30, len(papers)), whole)
			seen := map[string]bool{}
			for _, h := range whole {
				if seen[h.ID] {
					t.Fatalf("%s comes back twice", h.ID)
				}
				seen[h.ID] = true
			}
		})
	}
}

// asker asks one page of a query: limit hits from cursor on.
type asker func(limit int, cursor string) (search.Results, error)

// pagedQuery is a query pagesAreOneRanking pages through.
type pagedQuery struct {
	name string
	ask  asker
}

// pagedQueries are a free-text search, an aspect search, a similar-paper
// query and one by sentences of the paper id, in each mode.
func pagedQueries(ctx context.Context, eng *search.Engine, id string) []pagedQuery {
	var cases []pagedQuery
	for _, mode := range []search.Mode{search.Hybrid, search.Dense, search.Lexical} {
		cases = append(cases,
			pagedQuery{"search/" + string(mode), func(limit int, cursor string) (search.Results, error) {
				return eng.Search(ctx, search.Query{Text: "graph neural network for molecule retrieval", Mode: mode, Limit: limit, Cursor: cursor})
			}},
			pagedQuery{"search-aspect/" + string(mode), func(limit int, cursor string) (search.Results, error) {
				return eng.Search(ctx, search.Query{Text: "a policy gradient bound", Aspect: search.MethodAspect, Mode: mode, Limit: limit, Cursor: cursor})
			}},
			pagedQuery{"similar/" + string(mode), func(limit int, cursor string) (search.Results, error) {
				return eng.Similar(ctx, search.SimilarQuery{ID: id, Mode: mode, Limit: limit, Cursor: cursor})
			}},
			pagedQuery{"similar-sentences/" + string(mode), func(limit int, cursor string) (search.Results, error) {
				return eng.Similar(ctx, search.SimilarQuery{ID: id, Sentences: []int{0, 2}, Mode: mode, Limit: limit, Cursor: cursor})
			}})
	}
	return cases
}

// askPages asks in pages of size until it has total hits or the pages
// end.
func askPages(t *testing.T, ask asker, size, total int) []papersearch.Hit {
	var hits []papersearch.Hit
	cursor := ""
	for len(hits) < total {
		res, err := ask(size, cursor)
		if err != nil {
			t.Fatalf("page %d of %d: %v", len(hits)/size+1, size, err)
		}
		hits = append(hits, res.Hits...)
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	return hits[:min(len(hits), total)]
}

// sameHits fails unless got are want: the same papers, ranks and scores.
func sameHits(t *testing.T, what string, got, want []papersearch.Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, want %d", what, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.Rank != w.Rank || g.Score != w.Score {
			t.Fatalf("%s: hit %d is %s (rank %d, score %v), want %s (rank %d, score %v)", what, i, g.ID, g.Rank, g.Score, w.ID, w.Rank, w.Score)
		}
	}
}

// foldsAccents checks that s reads accents folded: "naive bayes" and
// "naïve bayes" score alike, and the author filter finds Schölkopf,
// Veličković and Erdős written without their accents, and O'Brien and
// d’Alembert with or without their apostrophes.
func foldsAccents(t *testing.T, s storage.Store) {
	ctx := context.Background()
	d, e := Doc(1), Doc(2)
	d.Paper.Title, d.Paper.Abstract = "Naïve Bayes revisited", "A naïve Bayes classifier for spam."
	d.Paper.Authors = []string{"Bernhard Schölkopf", "Petar Veličković", "Paul Erdős", "Stéphane Mallat", "Zoë O'Brien", "Jean d’Alembert"}
	e.Paper.Abstract = "Bayes nets for spam filtering with naive priors."
	if err := s.Upsert(ctx, []storage.Document{d, e}); err != nil {
		t.Fatal(err)
	}
	if err := s.RefreshLexical(ctx); err != nil {
		t.Fatal(err)
	}
	plain, err1 := s.Lexical(ctx, lexical.Analyze("naive bayes"), 5, papersearch.Filter{})
	accented, err2 := s.Lexical(ctx, lexical.Analyze("naïve bayes"), 5, papersearch.Filter{})
	if err1 != nil || err2 != nil || fmt.Sprint(plain) != fmt.Sprint(accented) || len(plain.Candidates) != 2 {
		t.Errorf("naive bayes %v, naïve bayes %v (%v, %v)", plain, accented, err1, err2)
	}
	for _, author := range []string{"scholkopf", "Schölkopf", "velickovic", "erdos", "stephane", "STEPHANE MAL",
		"obrien", "o'brien", "O’Brien", "brien", "zoe obri", "dalembert", "d'alembert", "alembert"} {
		got, err := s.Nearest(ctx, d.Vector, 5, papersearch.Filter{Author: author})
		if err != nil || len(got) != 1 || got[0].ID != d.Paper.ID {
			t.Errorf("author %q: %v, %v", author, got, err)
		}
	}
}
