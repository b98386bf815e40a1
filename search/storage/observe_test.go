package storage_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/sqlite"
	"github.com/papersearch/papersearch/search/storage"
	"github.com/papersearch/papersearch/search/storetest"
)

// TestObserved: an observed embedded store reports each read and upsert
// by its name, a paper not found as an answer, and notes what upserts and
// deletes changed, each with the mark of its last write; Forget drops the
// writes up to a mark. Its zero value, around a store, observes nothing and
// still notes the writes.
func TestObserved(t *testing.T) {
	ctx := context.Background()
	raw, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "papers.db"), storetest.Model)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	var mu sync.Mutex
	seen := map[string][]error{}
	s := storage.Observe(raw, func(op string, d time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		seen[op] = append(seen[op], err)
	})
	if err := s.Upsert(ctx, []storage.Document{storetest.Doc(1), storetest.Doc(2), storetest.Doc(3)}); err != nil {
		t.Fatal(err)
	}
	mark := s.Changes().Mark()
	if err := s.Delete(ctx, storetest.Doc(2).Paper.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "nothing-here"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Get of an unknown id: %v", err)
	}
	if _, err := s.Nearest(ctx, storetest.Doc(1).Vector, 2, papersearch.Filter{}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Count(ctx); err != nil || n != 2 {
		t.Fatalf("Count: %d %v", n, err)
	}
	for _, op := range []string{storage.OpUpsert, storage.OpGet, storage.OpNearest, storage.OpCount} {
		if errs := seen[op]; len(errs) != 1 || errs[0] != nil {
			t.Errorf("%s observed as %v, want once, succeeding", op, errs)
		}
	}
	if !slices.Contains(storage.Ops(), storage.OpUpsert) || len(seen) != 4 {
		t.Errorf("observed %v", seen)
	}
	changed, deleted := s.Changes().Since()
	if len(changed) != 2 || len(deleted) != 1 || deleted[storetest.Doc(2).Paper.ID] <= mark {
		t.Errorf("changes: %v, deleted %v (mark %d)", changed, deleted, mark)
	}
	s.Changes().Forget(mark)
	if changed, deleted := s.Changes().Since(); len(changed) != 0 || len(deleted) != 1 {
		t.Errorf("after Forget(%d): %v, deleted %v", mark, changed, deleted)
	}

	bare := &storage.Observed{Store: raw}
	if err := bare.Upsert(ctx, []storage.Document{storetest.Doc(4)}); err != nil {
		t.Fatal(err)
	}
	if changed, _ := bare.Changes().Since(); len(changed) != 1 {
		t.Errorf("a zero Observed noted %v", changed)
	}
}
