// Package alerts keeps the saved searches whose Atom feeds the API serves
// (POST /v1/alerts) as records of the store the service is configured with
// (storage.Records: the embedded store's file, or Qdrant), so every
// instance and process on that store answers the same alerts.
package alerts

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/search/storage"
)

// MaxAlerts bounds the alerts kept.
const MaxAlerts = 1000

// kind is the records' kind of an alert.
const kind = "alert"

// Errors of the store.
var (
	ErrNotFound = errors.New("no alert has the id")
	ErrTooMany  = fmt.Errorf("%d alerts are kept, the most there may be; delete one first", MaxAlerts)
)

// Store is the saved searches kept in a store's records. It is safe for
// concurrent use, and any number of Stores on one store (in one process or
// many) agree.
type Store struct {
	records storage.Records
}

// New keeps alerts in records.
func New(records storage.Records) *Store { return &Store{records: records} }

// Add keeps a, giving it a new id, and returns it as kept.
func (s *Store) Add(ctx context.Context, a wire.Alert) (wire.Alert, error) {
	all, err := s.records.ListRecords(ctx, kind)
	if err != nil {
		return wire.Alert{}, fmt.Errorf("keep the alert: %w", err)
	}
	if len(all) >= MaxAlerts {
		return wire.Alert{}, ErrTooMany
	}
	var id [16]byte
	rand.Read(id[:])
	a.ID, a.FeedURL = hex.EncodeToString(id[:]), ""
	if err := s.put(ctx, a); err != nil {
		return wire.Alert{}, err
	}
	return a, nil
}

// put writes a.
func (s *Store) put(ctx context.Context, a wire.Alert) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	if err := s.records.PutRecord(ctx, kind, a.ID, b); err != nil {
		return fmt.Errorf("keep the alert: %w", err)
	}
	return nil
}

// Get returns the alert of that id, or ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (wire.Alert, error) {
	b, err := s.records.GetRecord(ctx, kind, id)
	if errors.Is(err, storage.ErrNotFound) {
		return wire.Alert{}, fmt.Errorf("%w %q", ErrNotFound, id)
	}
	if err != nil {
		return wire.Alert{}, fmt.Errorf("read the alert: %w", err)
	}
	var a wire.Alert
	if err := json.Unmarshal(b, &a); err != nil {
		return wire.Alert{}, fmt.Errorf("read the alert %q: %w", id, err)
	}
	return a, nil
}

// List returns the alerts, newest first.
func (s *Store) List(ctx context.Context) ([]wire.Alert, error) {
	all, err := s.records.ListRecords(ctx, kind)
	if err != nil {
		return nil, fmt.Errorf("read the alerts: %w", err)
	}
	out := make([]wire.Alert, 0, len(all))
	for id, b := range all {
		var a wire.Alert
		if err := json.Unmarshal(b, &a); err != nil {
			return nil, fmt.Errorf("read the alert %q: %w", id, err)
		}
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b wire.Alert) int {
		return cmp.Or(b.Created.Compare(a.Created), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Delete forgets the alert of that id, or answers ErrNotFound.
func (s *Store) Delete(ctx context.Context, id string) error {
	err := s.records.DeleteRecord(ctx, kind, id)
	if errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("%w %q", ErrNotFound, id)
	}
	if err != nil {
		return fmt.Errorf("forget the alert: %w", err)
	}
	return nil
}

// Migrate moves the alerts an earlier version kept in a file of the data
// folder (path, alerts.json) into the store, keeping their ids, and
// renames the file to path.migrated; it returns how many it moved. No
// file is nothing to do.
func (s *Store) Migrate(ctx context.Context, path string) (int, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the alerts to move into the store: %w", err)
	}
	var kept []wire.Alert
	if err := json.Unmarshal(b, &kept); err != nil {
		return 0, fmt.Errorf("read the alerts in %s to move into the store: %w", path, err)
	}
	for _, a := range kept {
		if err := s.put(ctx, a); err != nil {
			return 0, err
		}
	}
	if err := os.Rename(path, path+".migrated"); err != nil {
		return 0, fmt.Errorf("moved the alerts of %s into the store: %w", path, err)
	}
	return len(kept), nil
}
