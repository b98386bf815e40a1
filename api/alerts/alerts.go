// Package alerts keeps the saved searches whose Atom feeds the API serves
// (POST /v1/alerts): one JSON file in the data folder, read at start and
// written whole, aside and renamed, on every change, so a crash leaves the
// old list or the new one.
package alerts

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"

	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/internal/atomicfile"
)

// MaxAlerts bounds the alerts kept.
const MaxAlerts = 1000

// Errors of the store.
var (
	ErrNotFound = errors.New("no alert has the id")
	ErrTooMany  = fmt.Errorf("%d alerts are kept, the most there may be; delete one first", MaxAlerts)
)

// Store is the saved searches of one data folder. It is safe for
// concurrent use; make it with Open.
type Store struct {
	path string
	mu   sync.Mutex
	list map[string]wire.Alert
}

// Open reads the alerts kept in the file at path; a missing file is an
// empty list.
func Open(path string) (*Store, error) {
	s := &Store{path: path, list: map[string]wire.Alert{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the alerts: %w", err)
	}
	var kept []wire.Alert
	if err := json.Unmarshal(b, &kept); err != nil {
		return nil, fmt.Errorf("read the alerts in %s: %w", path, err)
	}
	for _, a := range kept {
		s.list[a.ID] = a
	}
	return s, nil
}

// Add keeps a, giving it a new id, and returns it as kept.
func (s *Store) Add(a wire.Alert) (wire.Alert, error) {
	var id [16]byte
	rand.Read(id[:])
	a.ID, a.FeedURL = hex.EncodeToString(id[:]), ""
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.list) >= MaxAlerts {
		return wire.Alert{}, ErrTooMany
	}
	s.list[a.ID] = a
	if err := s.save(); err != nil {
		delete(s.list, a.ID)
		return wire.Alert{}, err
	}
	return a, nil
}

// Get returns the alert of that id, or ErrNotFound.
func (s *Store) Get(id string) (wire.Alert, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.list[id]
	if !ok {
		return wire.Alert{}, fmt.Errorf("%w %q", ErrNotFound, id)
	}
	return a, nil
}

// List returns the alerts, newest first.
func (s *Store) List() []wire.Alert {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]wire.Alert, 0, len(s.list))
	for _, a := range s.list {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b wire.Alert) int {
		return cmp.Or(b.Created.Compare(a.Created), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// Delete forgets the alert of that id, or answers ErrNotFound.
func (s *Store) Delete(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.list[id]
	if !ok {
		return fmt.Errorf("%w %q", ErrNotFound, id)
	}
	delete(s.list, id)
	if err := s.save(); err != nil {
		s.list[id] = a
		return err
	}
	return nil
}

// save writes the list aside and renames it over the file. The caller
// holds s.mu.
func (s *Store) save() error {
	kept := make([]wire.Alert, 0, len(s.list))
	for _, a := range s.list {
		kept = append(kept, a)
	}
	slices.SortFunc(kept, func(a, b wire.Alert) int { return cmp.Compare(a.ID, b.ID) })
	b, err := json.MarshalIndent(kept, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(s.path, b, 0o600); err != nil {
		return fmt.Errorf("keep the alerts: %w", err)
	}
	return nil
}
