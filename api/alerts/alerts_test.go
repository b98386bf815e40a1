package alerts

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/search/sqlite"
	"github.com/papersearch/papersearch/search/storetest"
)

// TestAlertsAreTheStoresRecords: alerts added get distinct random ids,
// are listed newest first by every Store on the same store (another
// process's, or the next start's), and are gone once deleted; an unknown
// id is ErrNotFound. An earlier version's alerts.json moves in once.
func TestAlertsAreTheStoresRecords(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "papers.db")
	open := func() *sqlite.Store {
		st, err := sqlite.Open(ctx, path, storetest.Model)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	s := New(open())
	if list, err := s.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("a new store: %v %v", list, err)
	}
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	a, err := s.Add(ctx, wire.Alert{Query: "graphs", Window: "7d", Limit: 20, Created: t0, FeedURL: "not kept"})
	if err != nil || len(a.ID) != 32 || a.FeedURL != "" {
		t.Fatalf("add: %+v %v", a, err)
	}
	b, _ := s.Add(ctx, wire.Alert{Collection: "mine", Window: "2w", Limit: 5, Created: t0.Add(time.Hour)})
	if a.ID == b.ID {
		t.Fatal("two alerts got one id")
	}
	other := New(open()) // another process on the same file
	if list, err := other.List(ctx); err != nil || len(list) != 2 || list[0].ID != b.ID || list[1] != a {
		t.Errorf("through another store, newest first: %+v %v", list, err)
	}
	if err := other.Delete(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("get an alert the other deleted: %v", err)
	}
	if err := s.Delete(ctx, a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete it again: %v", err)
	}

	legacy := filepath.Join(t.TempDir(), "alerts.json")
	old := []wire.Alert{{ID: "0123456789abcdef0123456789abcdef", Query: "kept", Window: "7d", Limit: 20, Created: t0}}
	raw, _ := json.Marshal(old)
	os.WriteFile(legacy, raw, 0o600)
	if n, err := s.Migrate(ctx, legacy); err != nil || n != 1 {
		t.Fatalf("migrate: %d %v", n, err)
	}
	if got, err := other.Get(ctx, old[0].ID); err != nil || got != old[0] {
		t.Errorf("a moved alert: %+v %v", got, err)
	}
	if _, err := os.Stat(legacy + ".migrated"); err != nil {
		t.Errorf("the file was not set aside: %v", err)
	}
	if n, err := s.Migrate(ctx, legacy); err != nil || n != 0 {
		t.Errorf("a second migration: %d %v", n, err)
	}
}
