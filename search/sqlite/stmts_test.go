package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/papersearch/papersearch/search/storage"
	"github.com/papersearch/papersearch/search/storetest"
)

// TestLookupByJSONList: ids are bound as one JSON array, so ids JSON must
// escape (quotes, backslashes, control characters, non-ASCII) are found
// as themselves, a list longer than a chunk is read whole, and an id
// naming nothing, or a prefix of one, finds nothing; titles read alone
// are the papers'.
func TestLookupByJSONList(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "papers.db"), storetest.Model)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	odd := []string{`quo"te`, `back\slash`, "tab\tand\nline", "ünïcode-日本", `[1,"x"]`, "a' OR '1'='1"}
	var docs []storage.Document
	var ids []string
	for i := range idChunk + 300 {
		d := storetest.Doc(i)
		if i < len(odd) {
			d.Paper.ID = odd[i]
		}
		docs = append(docs, d)
		ids = append(ids, d.Paper.ID)
	}
	if err := s.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	got, err := s.Lookup(ctx, append(ids, "absent", `quo"`))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ids) {
		t.Fatalf("found %d papers, want %d", len(got), len(ids))
	}
	for _, d := range docs {
		if p, ok := got[d.Paper.ID]; !ok || p.Title != d.Paper.Title {
			t.Fatalf("paper %q: got %+v (found %v)", d.Paper.ID, p, ok)
		}
	}
	// Titles, read alone or (a store without TitleReader) from Lookup's
	// papers, are Lookup's.
	for name, titles := range map[string]func(context.Context, []string) (map[string]string, error){
		"Titles": s.Titles, "Observed.Titles over Lookup": storage.Observe(struct{ storage.Store }{s}, nil).Titles,
	} {
		got, err := titles(ctx, append(ids, "absent"))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(ids) {
			t.Fatalf("%s: %d titles, want %d", name, len(got), len(ids))
		}
		for _, d := range docs {
			if got[d.Paper.ID] != d.Paper.Title {
				t.Fatalf("%s: paper %q: title %q, want %q", name, d.Paper.ID, got[d.Paper.ID], d.Paper.Title)
			}
		}
	}
	for _, id := range odd {
		doc, err := s.Get(ctx, id)
		if err != nil || doc.Paper.ID != id {
			t.Fatalf("Get(%q) = %q, %v", id, doc.Paper.ID, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if _, err := s.Lookup(ctx, ids[:3]); err == nil {
		t.Fatal("a lookup after Close succeeded")
	}
}
