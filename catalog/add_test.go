package catalog_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/searchtest"
	"github.com/papersearch/papersearch/search/storage"
	"github.com/papersearch/papersearch/search/storetest"
	"github.com/papersearch/papersearch/seeds"
)

// TestAddChecksEveryPaper: Add passes every paper through
// papersearch.Complete itself, so no caller need: control characters go
// and a missing title is made from the abstract; a batch holding papers
// that are not valid is refused whole, each named by its place and field,
// and nothing of it is stored; an added time given is not the store's.
func TestAddChecksEveryPaper(t *testing.T) {
	ctx := context.Background()
	eng, store := searchtest.Engine(t, hashvec.Embedder{Model: storetest.Model}, search.Options{})
	cat := catalog.New(eng, catalog.Options{})

	long := strings.Repeat("x", papersearch.MaxTitleLength+1)
	bad := []papersearch.Paper{
		{ID: "ok", Title: "Fine", Abstract: "A fine abstract."},
		{ID: "no-abstract", Title: "Empty"},
		{ID: "ok2", Title: "Fine too", Abstract: "Another."},
		{ID: "long", Title: long, Abstract: "Too long a title."},
	}
	_, err := cat.Add(ctx, bad, catalog.AddOptions{})
	var inv *catalog.InvalidError
	if !errors.As(err, &inv) || inv.Papers != 4 || len(inv.Invalid) != 2 {
		t.Fatalf("Add of 2 invalid papers in 4: %v, want an InvalidError naming 2 of 4", err)
	}
	var fe *papersearch.FieldError
	for i, want := range []struct {
		index int
		field string
		err   error
	}{{1, "abstract", papersearch.ErrNoAbstract}, {3, "title", papersearch.ErrTooLong}} {
		got := inv.Invalid[i]
		if got.Index != want.index || !errors.As(got.Err, &fe) || fe.Field != want.field || !errors.Is(got.Err, want.err) {
			t.Errorf("invalid paper %d: %d %v, want paper %d's %s (%v)", i, got.Index, got.Err, want.index, want.field, want.err)
		}
	}
	if !errors.Is(err, catalog.ErrNothingStored) || !errors.Is(err, papersearch.ErrNoAbstract) {
		t.Errorf("%v: want it to wrap ErrNothingStored and each paper's error", err)
	}
	if n, _ := store.Count(ctx); n != 0 {
		t.Errorf("the refused batch left %d papers in the store", n)
	}
	// A request's added time is refused beside the other faults.
	dated := []papersearch.Paper{{ID: "dated", Abstract: "A.", Added: time.Now()}, {ID: "empty"}}
	_, err = cat.Add(ctx, dated, catalog.AddOptions{RefuseAdded: true})
	if !errors.As(err, &inv) || len(inv.Invalid) != 2 || !errors.Is(inv.Invalid[0].Err, catalog.ErrAddedGiven) ||
		!errors.Is(inv.Invalid[1].Err, papersearch.ErrNoAbstract) {
		t.Errorf("Add refusing added times: %v, want paper 0's added and paper 1's abstract", err)
	}

	given := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	raw := papersearch.Paper{ID: "raw", Abstract: "Tidied\x1b[31m abstract.  Second sentence.", Added: given}
	sum, err := cat.Add(ctx, []papersearch.Paper{raw}, catalog.AddOptions{})
	if err != nil || sum.New != 1 {
		t.Fatalf("Add of a paper needing tidying: %+v %v", sum, err)
	}
	p, err := eng.Get(ctx, "raw")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := papersearch.Complete(raw)
	if strings.ContainsRune(p.Abstract, 0x1b) || p.Abstract != want.Abstract || p.Title == "" || p.Title != want.Title || !p.Added.After(given) {
		t.Errorf("stored %q titled %q added %v: want %q titled %q (Complete's), added now", p.Abstract, p.Title, p.Added, want.Abstract, want.Title)
	}
}

// TestImportRejectsInvalidPapers: a source that yields papers without
// checking them (Papers) has each invalid one rejected as its record, the
// rest stored.
func TestImportRejectsInvalidPapers(t *testing.T) {
	ctx := context.Background()
	eng, store := searchtest.Engine(t, hashvec.Embedder{Model: storetest.Model}, search.Options{})
	papers := []papersearch.Paper{
		{ID: "a", Title: "A", Abstract: "First."},
		{ID: "b", Title: "B"},
		{ID: "c", Title: "C", Abstract: "Third."},
	}
	sum, err := catalog.New(eng, catalog.Options{}).Import(ctx, catalog.Papers(papers), catalog.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var le *seeds.LineError
	if sum.Read != 3 || sum.Rejected != 1 || sum.NoAbstract != 1 || sum.New != 2 || len(sum.Rejections) != 1 ||
		!errors.As(sum.Rejections[0], &le) || le.Line != 2 {
		t.Errorf("import of 3 papers, the second without an abstract: %+v, want 2 new and record 2 rejected", sum)
	}
	if n, _ := store.Count(ctx); n != 2 {
		t.Errorf("the store holds %d papers, want 2", n)
	}
}

// TestUpdateKeepsThePaperWhereItIs: Update replaces a stored paper by id,
// tidied and checked as Add does, keeping when it was first stored, and
// merges nothing into it even when its new DOI is another stored paper's;
// an invalid edit and an unknown id are refused and change nothing.
func TestUpdateKeepsThePaperWhereItIs(t *testing.T) {
	ctx := context.Background()
	eng, _ := searchtest.Engine(t, hashvec.Embedder{Model: storetest.Model}, search.Options{})
	cat := catalog.New(eng, catalog.Options{})
	doi, _ := seeds.DOI("10.9/other")
	if _, err := cat.Add(ctx, []papersearch.Paper{
		{ID: "p", Title: "Before", Abstract: "An abstract."},
		{ID: "q", Title: "Other", Abstract: "Another abstract.", Sources: []papersearch.Source{doi}},
	}, catalog.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	before, err := eng.Get(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	edit := before
	edit.Title, edit.Sources, edit.Added = "After\x07", []papersearch.Source{doi}, time.Time{}
	got, err := cat.Update(ctx, edit)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := eng.Get(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "After" || stored.Title != "After" || !stored.Added.Equal(before.Added) {
		t.Errorf("updated %q, stored %q added %v: want After, added %v as before", got.Title, stored.Title, stored.Added, before.Added)
	}
	if q, err := eng.Get(ctx, "q"); err != nil || q.ID != "q" || q.Title != "Other" {
		t.Errorf("the paper holding the same DOI: %+v %v, want it kept apart", q, err)
	}

	edit.Abstract = ""
	var fe *papersearch.FieldError
	if _, err := cat.Update(ctx, edit); !errors.As(err, &fe) || fe.Field != "abstract" {
		t.Errorf("Update without an abstract: %v, want the abstract's FieldError", err)
	}
	if _, err := cat.Update(ctx, papersearch.Paper{ID: "nobody", Abstract: "x"}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Update of an unknown id: %v, want ErrNotFound", err)
	}
	if p, _ := eng.Get(ctx, "p"); p.Title != "After" || p.Abstract != "An abstract." {
		t.Errorf("after refused updates the paper is %+v", p)
	}
}

// TestStoredTagsOfAnEarlierRule: a paper holding tags an earlier
// version's rule took (and this one refuses) can still be retagged, have
// those tags removed, and take a new version with tags added: only the
// tags a request brings are checked.
func TestStoredTagsOfAnEarlierRule(t *testing.T) {
	ctx := context.Background()
	eng, store := searchtest.Engine(t, hashvec.Embedder{Model: storetest.Model}, search.Options{})
	cat := catalog.New(eng, catalog.Options{})
	legacy := []string{"not.-x", "not.not.x"}
	for _, tag := range legacy {
		if _, ok := papersearch.CleanTags([]string{tag}); ok {
			t.Fatalf("%q is a tag today: the test needs one this rule refuses", tag)
		}
	}
	p := papersearch.Paper{ID: "old", Title: "Old", Abstract: "A paper stored under an earlier rule.", Tags: legacy}
	if _, err := cat.Put(ctx, []papersearch.Paper{p}); err != nil {
		t.Fatal(err)
	}
	tagsOf := func() []string {
		t.Helper()
		got, err := store.Lookup(ctx, []string{"old"})
		if err != nil {
			t.Fatal(err)
		}
		return got["old"].Tags
	}
	if _, err := cat.Retag(ctx, []string{"old"}, []string{"Fresh"}, nil); err != nil {
		t.Fatalf("retag of a paper with older tags: %v", err)
	}
	if got := strings.Join(tagsOf(), " "); got != "fresh not.-x not.not.x" {
		t.Errorf("after adding a tag: %s", got)
	}
	if _, err := cat.Retag(ctx, []string{"old"}, nil, []string{"NOT.NOT.X"}); err != nil {
		t.Fatalf("removing an older tag: %v", err)
	}
	if got := strings.Join(tagsOf(), " "); got != "fresh not.-x" {
		t.Errorf("after removing not.not.x: %s", got)
	}
	if _, err := cat.Add(ctx, []papersearch.Paper{{ID: "old", Title: "Old", Abstract: "A paper stored under an earlier rule, again."}}, catalog.AddOptions{Tags: []string{"more"}}); err != nil {
		t.Fatalf("a new version of it: %v", err)
	}
	if got := strings.Join(tagsOf(), " "); got != "fresh more not.-x" {
		t.Errorf("after a new version: %s", got)
	}
	if _, err := cat.Retag(ctx, []string{"old"}, []string{"not.-y"}, nil); !errors.Is(err, papersearch.ErrBadTag) {
		t.Errorf("a request's own tag of the earlier rule: %v, want ErrBadTag", err)
	}
}
