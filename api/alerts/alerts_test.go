package alerts

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/papersearch/papersearch/api/wire"
)

// TestStoreKeepsAlertsAcrossOpens: alerts added get distinct random ids,
// are listed newest first, survive reopening the file, and are gone once
// deleted; an unknown id is ErrNotFound, a damaged file an error naming it.
func TestStoreKeepsAlertsAcrossOpens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "alerts.json")
	s, err := Open(path)
	if err != nil || len(s.List()) != 0 {
		t.Fatalf("a missing file: %v %v", s.List(), err)
	}
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	a, err := s.Add(wire.Alert{Query: "graphs", Window: "7d", Limit: 20, Created: t0, FeedURL: "not kept"})
	if err != nil || len(a.ID) != 32 || a.FeedURL != "" {
		t.Fatalf("add: %+v %v", a, err)
	}
	b, _ := s.Add(wire.Alert{Collection: "mine", Window: "2w", Limit: 5, Created: t0.Add(time.Hour)})
	if a.ID == b.ID {
		t.Fatal("two alerts got one id")
	}
	again, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if list := again.List(); len(list) != 2 || list[0].ID != b.ID || list[1] != a {
		t.Errorf("reopened, newest first: %+v", list)
	}
	if err := again.Delete(a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := again.Get(a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("get a deleted alert: %v", err)
	}
	if err := again.Delete(a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete it again: %v", err)
	}
	if third, _ := Open(path); len(third.List()) != 1 {
		t.Errorf("the deletion was not kept: %+v", third.List())
	}
	os.WriteFile(path, []byte("{not json"), 0o600)
	if _, err := Open(path); err == nil {
		t.Error("a damaged file was read")
	}
}
