package sqlite

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/storage"
	"github.com/papersearch/papersearch/search/storetest"
)

// TestFollowsAnotherWriter: two stores open on one file, as a server and
// the command line's ingest are. What one writes, updates or deletes, the
// other's in-memory index finds (Count, lexical and dense retrieval) once
// it catches up, its own writes interleaved and never applied twice; and
// a store that fell behind a trimmed log loads the file again.
func TestFollowsAnotherWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "papers.db")
	open := func() *Store {
		s, err := Open(ctx, path, storetest.Model)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	server, cli := open(), open()
	if err := server.Upsert(ctx, []storage.Document{storetest.Doc(1)}); err != nil {
		t.Fatal(err)
	}
	doc := func(i int, word string) storage.Document {
		d := storetest.Doc(i)
		d.Paper.Abstract += " " + word
		return d
	}
	if err := cli.Upsert(ctx, []storage.Document{doc(2, "zebrafish"), doc(3, "zebrafish")}); err != nil {
		t.Fatal(err)
	}
	if err := server.Upsert(ctx, []storage.Document{storetest.Doc(4)}); err != nil { // the server's own, after the CLI's
		t.Fatal(err)
	}
	if n, _ := server.Count(ctx); n != 2 {
		t.Fatalf("before catching up the server counts %d", n)
	}
	if n, err := server.CatchUp(ctx); err != nil || n != 2 {
		t.Fatalf("caught up with %d papers, want the CLI's 2 (%v)", n, err)
	}
	found := func(s *Store, word string) []string {
		m, err := s.Lexical(ctx, lexical.Analyze(word), 10, papersearch.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range m.Candidates {
			ids = append(ids, c.ID)
		}
		slices.Sort(ids)
		return ids
	}
	if c, _ := server.Count(ctx); c != 4 || !slices.Equal(found(server, "zebrafish"), []string{"p002", "p003"}) {
		t.Errorf("after catching up: %d papers, zebrafish in %v", c, found(server, "zebrafish"))
	}
	near, _ := server.Nearest(ctx, storetest.Doc(3).Vector, 1, papersearch.Filter{})
	if len(near) != 1 || near[0].ID != "p003" {
		t.Errorf("dense retrieval after catching up: %v", near)
	}
	// An update and a delete by the other process.
	if err := cli.Upsert(ctx, []storage.Document{doc(2, "axolotl")}); err != nil {
		t.Fatal(err)
	}
	if err := cli.Delete(ctx, "p003"); err != nil {
		t.Fatal(err)
	}
	if _, err := server.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if c, _ := server.Count(ctx); c != 3 || len(found(server, "zebrafish")) != 0 || !slices.Equal(found(server, "axolotl"), []string{"p002"}) {
		t.Errorf("after an update and a delete: %d papers, zebrafish in %v, axolotl in %v", c, found(server, "zebrafish"), found(server, "axolotl"))
	}
	// Nothing new: nothing applied, and the server's own writes were
	// never applied again (no retired rows beyond the other's changes).
	if n, _ := server.CatchUp(ctx); n != 0 {
		t.Errorf("a second catch-up applied %d", n)
	}
	if r := server.idx.Load().retired; r != 2 {
		t.Errorf("%d retired rows, want 2 (p002 replaced, p003 removed)", r)
	}
	// Follow does it on its own.
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go server.Follow(fctx, 10*time.Millisecond, slog.New(slog.DiscardHandler))
	if err := cli.Upsert(ctx, []storage.Document{doc(5, "quokka")}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(found(server, "quokka")) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if len(found(server, "quokka")) == 0 {
		t.Error("Follow did not apply the other process's write within 5 s")
	}
	cancel()
	// A log trimmed past what a store applied: it loads the file again.
	if _, err := cli.db.ExecContext(ctx, `INSERT INTO changes (id) VALUES ('p006'); DELETE FROM changes`); err != nil {
		t.Fatal(err)
	}
	if err := cli.Upsert(ctx, []storage.Document{doc(6, "okapi")}); err != nil {
		t.Fatal(err)
	}
	if _, err := server.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if c, _ := server.Count(ctx); c != 5 || !slices.Equal(found(server, "okapi"), []string{"p006"}) {
		t.Errorf("after a trimmed log: %d papers, okapi in %v", c, found(server, "okapi"))
	}
}
