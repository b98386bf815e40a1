package imports

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/papersearch/papersearch/search/storage"
)

// recordWatches keeps the watches as records of the service's store
// (storage.Records), for a store that is no SQLite file (Qdrant): every
// instance on it lists, runs and deletes the same watches. A record has no
// compare-and-set, so a lease is claimed by writing it and reading it back
// after confirm: of two instances claiming one watch at once the one
// written last holds it, and the other, reading the winner's name, backs
// off. A claim whose write landed more than confirm/2 after it read the
// watch free gives up, so every claim that stands was written before any
// other's read-back: two never both run one watch.
type recordWatches struct {
	records storage.Records
	// confirm is how long a claim waits before reading its lease back:
	// longer than the gap between another instance's reading a watch free
	// and writing its own claim.
	confirm time.Duration
}

// confirmLease is recordWatches' default confirm.
const confirmLease = time.Second

// watchKind is the records' kind of a watch.
const watchKind = "watch"

// watchDoc is a watch as its record holds it.
type watchDoc struct {
	Watch
	EveryMS    int64     `json:"every_ms"`
	RunNewest  string    `json:"run_newest,omitempty"`
	LeaseUntil time.Time `json:"lease_until"`
	LeaseOwner string    `json:"lease_owner,omitempty"`
}

func (d watchDoc) row() watchRow {
	w := d.Watch
	w.Running = false
	return watchRow{Watch: w, every: time.Duration(d.EveryMS) * time.Millisecond, runNewest: d.RunNewest, leaseUntil: d.LeaseUntil}
}

func (s *recordWatches) read(ctx context.Context, id string) (watchDoc, error) {
	b, err := s.records.GetRecord(ctx, watchKind, id)
	if errors.Is(err, storage.ErrNotFound) {
		return watchDoc{}, fmt.Errorf("%w %q", ErrNoWatch, id)
	}
	if err != nil {
		return watchDoc{}, fmt.Errorf("read the watch %s: %w", id, err)
	}
	var d watchDoc
	if err := json.Unmarshal(b, &d); err != nil {
		return watchDoc{}, fmt.Errorf("read the watch %s: %w", id, err)
	}
	return d, nil
}

func (s *recordWatches) write(ctx context.Context, d watchDoc) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	if err := s.records.PutRecord(ctx, watchKind, d.ID, b); err != nil {
		return fmt.Errorf("keep the watch %s: %w", d.ID, err)
	}
	return nil
}

func (s *recordWatches) close() error { return nil }

func (s *recordWatches) add(ctx context.Context, w watchRow) error {
	return s.write(ctx, watchDoc{Watch: w.Watch, EveryMS: w.every.Milliseconds()})
}

func (s *recordWatches) docs(ctx context.Context) ([]watchDoc, error) {
	all, err := s.records.ListRecords(ctx, watchKind)
	if err != nil {
		return nil, fmt.Errorf("read the watches: %w", err)
	}
	out := make([]watchDoc, 0, len(all))
	for id, b := range all {
		var d watchDoc
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, fmt.Errorf("read the watch %s: %w", id, err)
		}
		out = append(out, d)
	}
	return out, nil
}

func (s *recordWatches) list(ctx context.Context) ([]watchRow, error) {
	docs, err := s.docs(ctx)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(docs, func(a, b watchDoc) int { return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID)) })
	out := make([]watchRow, len(docs))
	for i, d := range docs {
		out[i] = d.row()
	}
	return out, nil
}

func (s *recordWatches) get(ctx context.Context, id string) (watchRow, error) {
	d, err := s.read(ctx, id)
	return d.row(), err
}

func (s *recordWatches) remove(ctx context.Context, id string) error {
	err := s.records.DeleteRecord(ctx, watchKind, id)
	if errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("%w %q", ErrNoWatch, id)
	}
	return err
}

// isDue reports whether d is due at now and no lease holds it.
func isDue(d watchDoc, now time.Time) bool { return !d.NextRun.After(now) && d.LeaseUntil.Before(now) }

func (s *recordWatches) due(ctx context.Context, now time.Time) ([]string, error) {
	docs, err := s.docs(ctx)
	if err != nil {
		return nil, err
	}
	docs = slices.DeleteFunc(docs, func(d watchDoc) bool { return !isDue(d, now) })
	slices.SortFunc(docs, func(a, b watchDoc) int { return cmp.Or(a.NextRun.Compare(b.NextRun), cmp.Compare(a.ID, b.ID)) })
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	return ids, nil
}

func (s *recordWatches) claim(ctx context.Context, id, owner string, now time.Time, ttl time.Duration) (bool, error) {
	d, err := s.read(ctx, id)
	if errors.Is(err, ErrNoWatch) {
		return false, nil
	}
	if err != nil || !isDue(d, now) {
		return false, err
	}
	// Once its lease is written the claim is seen through, even when ctx
	// ends meanwhile (the process stopping): one it confirms then is let
	// go at once, rather than left to hold the watch until the lease runs
	// out with no process running it.
	seen, done := context.WithTimeout(context.WithoutCancel(ctx), s.confirm+10*time.Second)
	defer done()
	readAt := time.Now()
	started := now
	d.LeaseOwner, d.LeaseUntil, d.LastStarted = owner, now.Add(ttl), &started
	if err := s.write(seen, d); err != nil {
		return false, err
	}
	if time.Since(readAt) > s.confirm/2 {
		// Another claim may have read the watch free and been confirmed
		// before this one landed: give way (the watch waits out the lease
		// written, at worst).
		return false, nil
	}
	time.Sleep(s.confirm)
	back, err := s.read(seen, id)
	if errors.Is(err, ErrNoWatch) {
		return false, nil
	}
	if err != nil || back.LeaseOwner != owner {
		return false, err
	}
	if ctx.Err() != nil {
		back.LeaseOwner, back.LeaseUntil = "", time.Time{}
		return false, errors.Join(ctx.Err(), s.write(seen, back))
	}
	return true, nil
}

// update changes owner's watch with change, if owner holds its lease, and
// reports whether it did.
func (s *recordWatches) update(ctx context.Context, id, owner string, change func(*watchDoc)) (bool, error) {
	d, err := s.read(ctx, id)
	if errors.Is(err, ErrNoWatch) {
		return false, nil
	}
	if err != nil || d.LeaseOwner != owner {
		return false, err
	}
	change(&d)
	return true, s.write(ctx, d)
}

func (s *recordWatches) renew(ctx context.Context, id, owner string, until time.Time) (bool, error) {
	return s.update(ctx, id, owner, func(d *watchDoc) { d.LeaseUntil = until })
}

func (s *recordWatches) noteNewest(ctx context.Context, id, owner, newest string) error {
	_, err := s.update(ctx, id, owner, func(d *watchDoc) { d.RunNewest = newest })
	return err
}

func (s *recordWatches) finish(ctx context.Context, id, owner string, end runEnd, stopped bool) error {
	_, err := s.update(ctx, id, owner, func(d *watchDoc) {
		d.LeaseUntil, d.LeaseOwner = time.Time{}, ""
		if stopped {
			return
		}
		if end.Completed {
			d.Since, d.Position, d.RunNewest, d.LastError = end.Since, end.Position, "", ""
		} else {
			d.LastError = end.Err
		}
		finished := end.Finished
		d.Runs++
		d.LastFinished, d.LastRead, d.LastAdded, d.NextRun = &finished, end.Read, end.Added, end.NextRun
	})
	if err != nil {
		return fmt.Errorf("record the run of watch %s: %w", id, err)
	}
	return nil
}

func (s *recordWatches) runNow(ctx context.Context, id string, now time.Time) error {
	d, err := s.read(ctx, id)
	if err != nil {
		return err
	}
	d.NextRun = now
	return s.write(ctx, d)
}
