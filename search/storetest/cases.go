package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/roles"
	"github.com/papersearch/papersearch/search/storage"
)

// upsertGetCount is Run's UpsertGetCount case.
func upsertGetCount(t *testing.T, open func(t *testing.T) storage.Store) {
	ctx := context.Background()
	s := open(t)
	docs := []storage.Document{Doc(1), Doc(2), Doc(3)}
	if err := s.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Count(ctx); n != 3 {
		t.Errorf("Count = %d, want 3", n)
	}
	got, err := s.Get(ctx, "p002")
	if err != nil {
		t.Fatal(err)
	}
	if got.Paper.Title != "Paper 2" || got.Paper.Year != 2002 || len(got.Paper.Authors) != 1 || got.TextHash != docs[1].TextHash {
		t.Errorf("Get = %+v", got.Paper)
	}
	if embed.Dot(got.Vector, docs[1].Vector) < 0.9999 {
		t.Error("stored vector differs from the one given")
	}
	// Upserting the same id replaces it and does not add a row.
	changed := Doc(2)
	changed.Paper.Title = "Renamed"
	if err := s.Upsert(ctx, []storage.Document{changed}); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Count(ctx); n != 3 {
		t.Errorf("Count after replace = %d, want 3", n)
	}
	if got, _ := s.Get(ctx, "p002"); got.Paper.Title != "Renamed" {
		t.Errorf("title after replace = %q", got.Paper.Title)
	}
}

// keepsEveryField is Run's KeepsEveryField case.
func keepsEveryField(t *testing.T, open func(t *testing.T) storage.Store) {
	ctx := context.Background()
	s := open(t)
	d := Doc(1)
	d.Paper = papersearch.Paper{ID: "doi:10.1/x", Title: "Every field", Abstract: "An abstract.", Authors: []string{"Ada Lovelace", "Alan Turing"},
		Venue: "Journal of Tests", Year: 2021, URL: "https://example.org/x", Type: papersearch.TypeJournalArticle,
		Tags: []string{"a", "b"}, Sources: []papersearch.Source{{ID: "arxiv:2101.00001", URL: "https://arxiv.org/abs/2101.00001"}},
		Date: "2021-03", Added: time.Date(2021, 4, 1, 10, 0, 0, 0, time.UTC)}
	if err := s.Upsert(ctx, []storage.Document{d}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, d.Paper.ID)
	if err != nil || fmt.Sprintf("%+v", got.Paper) != fmt.Sprintf("%+v", d.Paper) {
		t.Errorf("Get = %+v, %v; want %+v", got.Paper, err, d.Paper)
	}
	looked, err := s.Lookup(ctx, []string{d.Paper.ID})
	if err != nil || fmt.Sprintf("%+v", looked[d.Paper.ID]) != fmt.Sprintf("%+v", d.Paper) {
		t.Errorf("Lookup = %+v, %v; want %+v", looked[d.Paper.ID], err, d.Paper)
	}
	// A field emptied is emptied.
	d.Paper.Type = ""
	if err := s.Upsert(ctx, []storage.Document{d}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, d.Paper.ID); err != nil || got.Paper.Type != "" {
		t.Errorf("type after it was emptied: %q, %v", got.Paper.Type, err)
	}
}

// notFound is Run's NotFound case.
func notFound(t *testing.T, open func(t *testing.T) storage.Store) {
	ctx := context.Background()
	s := open(t)
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Get unknown: err = %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "nope"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Delete unknown: err = %v, want ErrNotFound", err)
	}
}

// wrongDimension is Run's WrongDimension case.
func wrongDimension(t *testing.T, open func(t *testing.T) storage.Store) {
	ctx := context.Background()
	s := open(t)
	d := Doc(1)
	d.Vector = d.Vector[:4]
	if err := s.Upsert(ctx, []storage.Document{Doc(2), d}); !errors.Is(err, storage.ErrDimension) {
		t.Errorf("Upsert short vector: err = %v, want ErrDimension", err)
	}
	if n, _ := s.Count(ctx); n != 0 {
		t.Errorf("a rejected batch stored %d papers", n)
	}
	if _, err := s.Nearest(ctx, make([]float32, 3), 5, papersearch.Filter{}); !errors.Is(err, storage.ErrDimension) {
		t.Errorf("Nearest short vector: err = %v, want ErrDimension", err)
	}
}

// nearestIsExactAndExcludes is Run's NearestIsExactAndExcludes case.
func nearestIsExactAndExcludes(t *testing.T, open func(t *testing.T) storage.Store) {
	ctx := context.Background()
	s, docs := filled(t, open, 50)
	q := docs[17].Vector
	got, err := s.Nearest(ctx, q, 5, papersearch.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || got[0].ID != "p017" || got[0].Score < 0.9999 {
		t.Fatalf("Nearest = %v, want p017 first with score 1", got)
	}
	// Brute force agrees on the order.
	for i, c := range Exact(q, docs, 5) {
		if got[i].ID != c.ID {
			t.Errorf("rank %d: %s, brute force says %s", i+1, got[i].ID, c.ID)
		}
	}
	for i := 1; i < len(got); i++ {
		if got[i].Score > got[i-1].Score {
			t.Errorf("scores not descending: %v", got)
		}
	}
	ex, _ := s.Nearest(ctx, q, 5, papersearch.Filter{Exclude: []string{"p017"}})
	for _, c := range ex {
		if c.ID == "p017" {
			t.Error("excluded id came back")
		}
	}
	if len(ex) != 5 {
		t.Errorf("with exclusion got %d results, want 5", len(ex))
	}
	all, _ := s.Nearest(ctx, q, 500, papersearch.Filter{})
	if len(all) != 50 {
		t.Errorf("k larger than the store: got %d, want 50", len(all))
	}
}

// deleteRemoves is Run's Delete case.
func deleteRemoves(t *testing.T, open func(t *testing.T) storage.Store) {
	ctx := context.Background()
	s := open(t)
	docs := []storage.Document{Doc(1), Doc(2), Doc(3)}
	if err := s.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "p001"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "p001"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("deleted paper still there: %v", err)
	}
	got, _ := s.Nearest(ctx, docs[2].Vector, 10, papersearch.Filter{})
	if len(got) != 2 || got[0].ID != "p003" {
		t.Errorf("after delete Nearest = %v", got)
	}
}

// scroll is Run's Scroll case.
func scroll(t *testing.T, open func(t *testing.T) storage.Store) {
	ctx := context.Background()
	s, _ := filled(t, open, 25)
	seen := map[string]bool{}
	pages := 0
	for cursor := ""; ; pages++ {
		page, next, err := s.Scroll(ctx, cursor, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range page {
			if seen[d.Paper.ID] {
				t.Errorf("scroll repeated %s", d.Paper.ID)
			}
			seen[d.Paper.ID] = true
			if len(d.Vector) != Model.Dim || d.Paper.Title == "" {
				t.Errorf("scrolled document incomplete: %+v", d.Paper)
			}
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if len(seen) != 25 || pages != 2 {
		t.Errorf("scroll saw %d papers in %d pages, want 25 in 3", len(seen), pages+1)
	}
}

// fingerprints is Run's Fingerprints case.
func fingerprints(t *testing.T, open func(t *testing.T) storage.Store) {
	ctx := context.Background()
	s := open(t)
	if err := s.Upsert(ctx, []storage.Document{Doc(1), Doc(2)}); err != nil {
		t.Fatal(err)
	}
	papers, err := s.Lookup(ctx, []string{"p002", "p404", "p001"})
	if err != nil {
		t.Fatal(err)
	}
	if len(papers) != 2 || papers["p002"].Title != "Paper 2" || papers["p001"].Year != 2001 {
		t.Errorf("Lookup = %+v", papers)
	}
	fps, err := s.Fingerprints(ctx, []string{"p001", "p002", "p404"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fps) != 2 || fps["p001"].PaperHash != Doc(1).PaperHash {
		t.Errorf("Fingerprints = %v", fps)
	}
	vecs, err := s.Vectors(ctx, []string{"p404", "p002", "p001"})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string][]float32{"p001": Doc(1).Vector, "p002": Doc(2).Vector} {
		got := vecs[id]
		if len(got) != len(want) {
			t.Fatalf("Vectors[%s] has %d dimensions, want %d", id, len(got), len(want))
		}
		for i := range want {
			if math.Abs(float64(got[i]-want[i])) > 1e-6 {
				t.Fatalf("Vectors[%s][%d] = %g, want %g", id, i, got[i], want[i])
			}
		}
	}
	if len(vecs) != 2 {
		t.Errorf("Vectors of two papers and an unknown id: %d vectors", len(vecs))
	}
}

// sentences is Run's Sentences case.
func sentences(t *testing.T, open func(t *testing.T) storage.Store) {
	ctx := context.Background()
	s := open(t)
	if !s.KeepsSentences() {
		t.Fatal("a store created now says it keeps no sentence vectors")
	}
	d := Doc(1)
	d.Sentences = []storage.Sentence{{Role: roles.Background, Vector: RandomUnit(11, Model.Dim)},
		{Role: roles.Method, Vector: RandomUnit(12, Model.Dim)}, {Role: roles.Result, Vector: RandomUnit(13, Model.Dim)}}
	if err := s.Upsert(ctx, []storage.Document{d, Doc(2)}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Sentences(ctx, []string{"p001", "p002", "nope"})
	if err != nil {
		t.Fatal(err)
	}
	ss := got["p001"]
	if len(got) != 1 || len(ss) != 3 {
		t.Fatalf("Sentences = %+v, want p001's three", got)
	}
	for i, want := range d.Sentences {
		if ss[i].Role != want.Role || embed.Dot(ss[i].Vector, want.Vector) < 0.999 {
			t.Errorf("sentence %d: %v, cosine %.4f to the one stored", i, ss[i].Role, embed.Dot(ss[i].Vector, want.Vector))
		}
	}
	if doc, err := s.Get(ctx, "p001"); err != nil || len(doc.Sentences) != 3 {
		t.Errorf("Get: %d sentences, %v", len(doc.Sentences), err)
	}
	// Visited (in the store's reused buffers where it has them), the same
	// sentences, once each.
	var mu sync.Mutex
	visited := map[string][]storage.Sentence{}
	err = storage.Observe(s, nil).VisitSentences(ctx, []string{"p001", "p002", "nope"}, func(id string, vs []storage.Sentence) {
		kept := make([]storage.Sentence, len(vs))
		for i, x := range vs {
			kept[i] = storage.Sentence{Role: x.Role, Vector: slices.Clone(x.Vector)}
		}
		mu.Lock()
		defer mu.Unlock()
		if _, twice := visited[id]; twice {
			t.Errorf("%s visited twice", id)
		}
		visited[id] = kept
	})
	if err != nil || !reflect.DeepEqual(visited, got) {
		t.Errorf("VisitSentences showed %+v, %v; Sentences returned %+v", visited, err, got)
	}
	bad := d
	bad.Sentences = []storage.Sentence{{Vector: make([]float32, 3)}}
	if err := s.Upsert(ctx, []storage.Document{bad}); !errors.Is(err, storage.ErrDimension) {
		t.Errorf("a sentence of the wrong dimension: %v", err)
	}
	if err := s.Delete(ctx, "p001"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Sentences(ctx, []string{"p001"}); len(got) != 0 {
		t.Errorf("after delete: %+v", got)
	}
}

// worksFindsVersions is Run's Works case.
func worksFindsVersions(t *testing.T, open func(t *testing.T) storage.Store) {
	ctx := context.Background()
	s := open(t)
	d := Doc(1)
	d.Paper.Title, d.Paper.Authors = "Deep Networks Learn Slowly", []string{"Ada Lovelace", "Alan Turing"}
	d.Paper.Sources = []papersearch.Source{{ID: "arxiv:2401.00001", URL: "https://arxiv.org/abs/2401.00001"}, {ID: "doi:10.1/x"}}
	if err := s.Upsert(ctx, []storage.Document{d, Doc(2), Doc(3)}); err != nil {
		t.Fatal(err)
	}
	works := func(keys ...string) []string {
		t.Helper()
		found, err := s.Works(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Sorted(maps.Keys(found))
	}
	for _, tt := range []struct {
		keys []string
		want []string
	}{
		{[]string{"doi:10.1/x"}, []string{"p001"}},
		{[]string{"arxiv:2401.00001", "nope"}, []string{"p001"}},
		{[]string{"title:deep networks learn slowly/lovelace"}, []string{"p001"}},
		{[]string{"p002", "p003", "doi:10.1/x"}, []string{"p001", "p002", "p003"}},
		{[]string{"title:deep networks learn slowly/turing", "arxiv:2401.00002"}, nil},
	} {
		if got := works(tt.keys...); !slices.Equal(got, tt.want) {
			t.Errorf("Works(%q) = %q, want %q", tt.keys, got, tt.want)
		}
	}
	got, err := s.Get(ctx, "p001")
	if err != nil || !slices.Equal(got.Paper.Sources, d.Paper.Sources) {
		t.Errorf("Get p001: sources %+v, %v; want %+v", got.Paper.Sources, err, d.Paper.Sources)
	}
	// A new version's keys replace the old ones; a deleted paper has none.
	d.Paper.Sources = d.Paper.Sources[:1]
	if err := s.Upsert(ctx, []storage.Document{d}); err != nil {
		t.Fatal(err)
	}
	if got := works("doi:10.1/x"); got != nil {
		t.Errorf("after the DOI was dropped, Works(doi) = %q", got)
	}
	if err := s.Delete(ctx, "p001"); err != nil {
		t.Fatal(err)
	}
	if got := works("arxiv:2401.00001", "p001"); got != nil {
		t.Errorf("after delete, Works = %q", got)
	}
}
