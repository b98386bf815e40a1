package search_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/eval"
	"github.com/papersearch/papersearch/search/searchtest"
)

func topicsOf(hits []papersearch.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, strings.SplitN(h.ID, "-", 2)[0])
	}
	return out
}

// TestRecommend: every method recommends papers of the collection's two
// topics and no member; each hit names its nearest members, nearest
// first; pages are one ranking.
func TestRecommend(t *testing.T) {
	ctx := context.Background()
	eng := searchtest.TopicEngine(t)
	for _, m := range search.RecommendMethods() {
		t.Run(string(m), func(t *testing.T) {
			res, err := eng.Recommend(ctx, search.RecommendQuery{Tag: "LIB", Method: m, Limit: 8})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) != 8 {
				t.Fatalf("%d hits, want 8", len(res.Hits))
			}
			for _, h := range res.Hits {
				topic := strings.SplitN(h.ID, "-", 2)[0]
				if topic != "t1" && topic != "t4" || slices.Contains(h.Paper.Tags, "lib") {
					t.Errorf("%s recommended; topics %v", h.ID, topicsOf(res.Hits))
				}
				if len(h.Because) != 3 || !strings.HasPrefix(h.Because[0].ID, topic+"-") || h.Because[0].Title == "" ||
					h.Because[0].Similarity < h.Because[1].Similarity || h.Because[1].Similarity < h.Because[2].Similarity {
					t.Errorf("%s because %+v", h.ID, h.Because)
				}
			}
			// The same ranking in pages of 3.
			var paged []papersearch.Hit
			for cursor := ""; len(paged) < 8; {
				page, err := eng.Recommend(ctx, search.RecommendQuery{Tag: "lib", Method: m, Limit: 3, Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				paged = append(paged, page.Hits...)
				if cursor = page.NextCursor; cursor == "" {
					break
				}
			}
			for i := range res.Hits {
				if paged[i].ID != res.Hits[i].ID || paged[i].Score != res.Hits[i].Score {
					t.Fatalf("page order %v differs from one page's %v", topicsOf(paged), topicsOf(res.Hits))
				}
			}
		})
	}
}

// TestRecommendNotInterested: papers marked not interested for the
// collection never come back and push its recommendations away: with all
// of topic 4's others dismissed but one, topic 1 leads.
func TestRecommendNotInterested(t *testing.T) {
	ctx := context.Background()
	eng := searchtest.TopicEngine(t)
	var dismissed []papersearch.Paper
	for n := 4; n < 11; n++ {
		dismissed = append(dismissed, searchtest.TopicPaper(4, n, papersearch.NotInterestedTag("lib")))
	}
	if _, err := catalog.New(eng, catalog.Options{}).Put(ctx, dismissed); err != nil {
		t.Fatal(err)
	}
	for _, m := range search.RecommendMethods() {
		res, err := eng.Recommend(ctx, search.RecommendQuery{Tag: "lib", Method: m, Limit: 9})
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range res.Hits {
			if slices.Contains(h.Paper.Tags, "not.lib") {
				t.Errorf("%s: dismissed %s recommended", m, h.ID)
			}
			if i < 8 && !strings.HasPrefix(h.ID, "t1-") {
				t.Errorf("%s: hit %d is %s, want topic 1's 8 others first; %v", m, i, h.ID, topicsOf(res.Hits))
			}
		}
	}
}

// TestRecommendFilters: recommendations keep within the filter (here a
// year), and a bad request says which field is at fault.
func TestRecommendFilters(t *testing.T) {
	ctx := context.Background()
	eng := searchtest.TopicEngine(t)
	res, err := eng.Recommend(ctx, search.RecommendQuery{Tag: "lib", Filter: papersearch.Filter{YearMin: 2022, YearMax: 2022}})
	if err != nil || len(res.Hits) == 0 {
		t.Fatalf("%v, %d hits", err, len(res.Hits))
	}
	for _, h := range res.Hits {
		if h.Paper.Year != 2022 {
			t.Errorf("%s of %d within 2022", h.ID, h.Paper.Year)
		}
	}
	for _, tt := range []struct {
		q     search.RecommendQuery
		field string
	}{
		{search.RecommendQuery{Tag: "has space"}, "tag"},
		{search.RecommendQuery{Tag: strings.Repeat("a", papersearch.MaxTagLength+1)}, "tag"},
		{search.RecommendQuery{Tag: "lib", Method: "svm"}, "method"},
		{search.RecommendQuery{Tag: "lib", Limit: 1000}, "limit"},
		{search.RecommendQuery{Tag: "lib", Filter: papersearch.Filter{Since: "soon"}}, "filters/since"},
	} {
		var fe *papersearch.FieldError
		if _, err := eng.Recommend(ctx, tt.q); !errors.As(err, &fe) || fe.Field != tt.field || !errors.Is(err, search.ErrInvalidQuery) {
			t.Errorf("%+v: %v, want a field error on %s", tt.q, err, tt.field)
		}
	}
	if _, err := eng.Recommend(ctx, search.RecommendQuery{Tag: "nobody"}); !errors.Is(err, search.ErrEmptyCollection) {
		t.Errorf("an empty collection: %v", err)
	}
}

// TestRetagBadTag: a tag Retag would add that is not a tag is the
// caller's fault, a FieldError on "tags", and changes no paper.
func TestRetagBadTag(t *testing.T) {
	ctx := context.Background()
	eng := searchtest.TopicEngine(t)
	var fe *papersearch.FieldError
	long := strings.Repeat("a", papersearch.MaxTagLength+1)
	if _, err := catalog.New(eng, catalog.Options{}).Retag(ctx, []string{"t1-0"}, []string{long}, nil); !errors.As(err, &fe) || fe.Field != "tags" || !errors.Is(err, papersearch.ErrBadTag) {
		t.Errorf("retag with a %d-byte tag: %v", len(long), err)
	}
	if p, err := eng.Get(ctx, "t1-0"); err != nil || !slices.Equal(p.Tags, []string{"lib"}) {
		t.Errorf("after the refused retag: %v %v", p.Tags, err)
	}
}

// TestRecommendCases: each author of enough papers gives a collection of
// all but their latest, and a case per year of those held out.
func TestRecommendCases(t *testing.T) {
	var papers []papersearch.Paper
	add := func(id string, year int, authors ...string) {
		papers = append(papers, papersearch.Paper{ID: id, Year: year, Authors: authors})
	}
	for i := range 6 {
		add(fmt.Sprintf("a%d", i), 2018+i%2, "Ada")
	}
	add("a6", 2021, "Ada", "Bob")
	add("a7", 2022, "Ada")
	add("b1", 2020, "Bob")
	add("x", 0, "Ada") // no year: not counted
	cases := eval.RecommendCases(papers, 8, 2)
	if len(cases) != 2 {
		t.Fatalf("cases %+v", cases)
	}
	for i, want := range []eval.RecommendCase{
		{Author: "Ada", Members: []string{"a0", "a2", "a4", "a1", "a3", "a5"}, Year: 2021, Relevant: []string{"a6"}},
		{Author: "Ada", Members: []string{"a0", "a2", "a4", "a1", "a3", "a5"}, Year: 2022, Relevant: []string{"a7"}},
	} {
		if fmt.Sprint(cases[i]) != fmt.Sprint(want) {
			t.Errorf("case %d = %+v, want %+v", i, cases[i], want)
		}
	}
}
