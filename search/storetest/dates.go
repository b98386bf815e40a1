package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/storage"
)

// keepsAddedTimes: a paper stored without an added time gets the time it
// was stored, and keeps it when written again; an earlier time given wins,
// a later one does not; Fingerprints say it.
func keepsAddedTimes(t *testing.T, open func(t *testing.T) storage.Store) {
	ctx := context.Background()
	s := open(t)
	before := time.Now().UTC().Truncate(time.Second)
	d := Doc(1)
	if err := s.Upsert(ctx, []storage.Document{d}); err != nil {
		t.Fatal(err)
	}
	after := time.Now().UTC()
	got, err := s.Get(ctx, d.Paper.ID)
	if err != nil || got.Paper.Added.Before(before) || got.Paper.Added.After(after) {
		t.Fatalf("added = %v (%v), want between %v and %v", got.Paper.Added, err, before, after)
	}
	first := got.Paper.Added
	d.Paper.Title = "Written again"
	if err := s.Upsert(ctx, []storage.Document{d}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, d.Paper.ID); err != nil || !got.Paper.Added.Equal(first) {
		t.Errorf("written again without a time: added %v (%v), want %v", got.Paper.Added, err, first)
	}
	earlier := time.Date(2020, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, given := range []time.Time{earlier, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)} {
		d.Paper.Added = given
		if err := s.Upsert(ctx, []storage.Document{d}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Get(ctx, d.Paper.ID); err != nil || !got.Paper.Added.Equal(earlier) {
			t.Errorf("given %v: added %v (%v), want the earliest, %v", given, got.Paper.Added, err, earlier)
		}
	}
	fps, err := s.Fingerprints(ctx, []string{d.Paper.ID})
	if err != nil || !fps[d.Paper.ID].Added.Equal(earlier) {
		t.Errorf("Fingerprints = %+v, %v; want added %v", fps, err, earlier)
	}
}

// dateFilters: since and until bound the days a paper was published on
// (its date, a month's days, or its year's) or when it was added, in
// dense and lexical retrieval alike; a paper with no date and no year
// matches no bound on publication.
func dateFilters(t *testing.T, open func(t *testing.T) storage.Store) {
	ctx := context.Background()
	s := open(t)
	added := func(day int) time.Time { return time.Date(2026, 11, day, 9, 0, 0, 0, time.UTC) }
	var docs []storage.Document
	for i, p := range []papersearch.Paper{
		{Date: "2026-03-14", Year: 2026, Added: added(1)},
		{Date: "2026-04", Year: 2026, Added: added(2)},
		{Year: 2025, Added: added(3)},
		{Added: added(4)},                                 // neither date nor year
		{Date: "2024-12-31", Year: 2024, Added: added(5)}, // the day before 2025
	} {
		d := Doc(i)
		p.ID, p.Title, p.Abstract = d.Paper.ID, "Graph paper", "Graphs in time."
		d.Paper = p
		docs = append(docs, d)
	}
	if err := s.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	id := func(i int) string { return docs[i].Paper.ID }
	for _, tt := range []struct {
		f    papersearch.Filter
		want []int
	}{
		{papersearch.Filter{Since: "2026-03-14"}, []int{0, 1}},
		{papersearch.Filter{Since: "2026-03-15"}, []int{1}},
		{papersearch.Filter{Since: "2026-04-30", Until: "2026-12-31"}, []int{1}},
		{papersearch.Filter{Until: "2026-03-13"}, []int{2, 4}},
		{papersearch.Filter{Since: "2025-06-01", Until: "2025-06-01"}, []int{2}}, // known only by its year
		{papersearch.Filter{Since: "2025-01-01T00:00:00Z", Until: "2025-01-01T00:00:00Z"}, []int{2}},
		{papersearch.Filter{Until: "2024-12-31"}, []int{4}},
		{papersearch.Filter{By: papersearch.ByAdded, Since: "2026-11-03"}, []int{2, 3, 4}},
		{papersearch.Filter{By: papersearch.ByAdded, Since: "2026-11-02T09:00:01Z", Until: "2026-11-04T09:00:00Z"}, []int{2, 3}},
		{papersearch.Filter{By: papersearch.ByAdded, Until: "2026-11-01"}, []int{0}},
		{papersearch.Filter{By: papersearch.ByAdded}, []int{0, 1, 2, 3, 4}},
	} {
		var want []string
		for _, i := range tt.want {
			want = append(want, id(i))
		}
		dense, err := s.Nearest(ctx, docs[0].Vector, 10, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		lex, err := s.Lexical(ctx, lexical.Analyze("graph"), 10, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		for name, got := range map[string][]string{"Nearest": sortedIDs(dense), "Lexical": sortedIDs(lex.Candidates)} {
			if !slices.Equal(got, want) {
				t.Errorf("%s with %+v = %v, want %v", name, tt.f, got, want)
			}
		}
	}
	for i, d := range docs {
		if got, err := s.Get(ctx, d.Paper.ID); err != nil || got.Paper.Date != d.Paper.Date || !got.Paper.Added.Equal(added(i+1)) {
			t.Errorf("paper %d: date %q, added %v (%v); want %q, %v", i, got.Paper.Date, got.Paper.Added, err, d.Paper.Date, added(i+1))
		}
	}
}

// sortedIDs is the ids of cs, sorted.
func sortedIDs(cs []storage.Candidate) []string {
	out := ids(cs)
	slices.Sort(out)
	return out
}
