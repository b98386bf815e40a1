package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/papersearch/papersearch/embed"
)

// Several processes may open one file: a server and the command line's
// ingest, import or reindex, or two servers. Each change a process commits
// (an upsert or a delete) appends the ids it touched to the changes table
// in the same transaction, and every open Store follows that log (Follow):
// it applies the changes other processes made to its in-memory index, so
// their papers are found by its searches within a poll interval.

// keepChanges is how many of the latest changes the log keeps; a process
// that falls further behind (one stopped in a debugger for hours) loads its
// index again from the file.
const keepChanges = 1_000_000

// DefaultFollowEvery is how often a Store looks for other processes'
// changes.
const DefaultFollowEvery = time.Second

// ownChanges are the seq numbers [first, last] of the changes log that one
// of this Store's own transactions wrote: applied already.
type ownChanges struct{ first, last int64 }

// logChanges appends ids to the changes log within tx and returns the seq
// numbers they got.
func logChanges(ctx context.Context, tx *sql.Tx, ids []string) (ownChanges, error) {
	var span ownChanges
	for i, id := range ids {
		res, err := tx.ExecContext(ctx, `INSERT INTO changes (id) VALUES (?)`, id)
		if err != nil {
			return span, fmt.Errorf("log the change of %s: %w", id, err)
		}
		seq, err := res.LastInsertId()
		if err != nil {
			return span, fmt.Errorf("log the change of %s: %w", id, err)
		}
		if i == 0 {
			span.first = seq
		}
		span.last = seq
	}
	if span.last%1024 == 0 && span.last > keepChanges {
		if _, err := tx.ExecContext(ctx, `DELETE FROM changes WHERE seq <= ?`, span.last-keepChanges); err != nil {
			return span, fmt.Errorf("trim the changes log: %w", err)
		}
	}
	return span, nil
}

// committed records that this Store's transaction, which wrote span of the
// log, is committed and its index updated. The caller holds s.writeMu.
func (s *Store) committed(span ownChanges) {
	if span.first == 0 {
		return
	}
	if span.first == s.applied+1 {
		s.applied = span.last
		return
	}
	// Another process's changes came in between: the next catch-up
	// applies them and passes over these.
	s.own = append(s.own, span)
}

// lastChange is the newest seq of the changes log.
func lastChange(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int64, error) {
	var seq sql.NullInt64
	if err := q.QueryRowContext(ctx, `SELECT MAX(seq) FROM changes`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("read the changes log: %w", err)
	}
	return seq.Int64, nil
}

// Follow applies, every interval until ctx ends or the store is closed,
// the changes other processes committed to the file to the in-memory
// index, logging what it could not apply; see CatchUp.
func (s *Store) Follow(ctx context.Context, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.closed:
			return
		case <-t.C:
		}
		if n, err := s.CatchUp(ctx); err != nil && ctx.Err() == nil {
			log.Warn("embedded store: other processes' changes not applied; trying again", "error", err)
		} else if n > 0 {
			log.Debug("embedded store: applied other processes' changes", "papers", n)
		}
	}
}

// CatchUp applies the changes other processes committed to the file since
// this Store last looked to its in-memory index, and returns how many
// papers they touched: each stored is put again as the file holds it,
// each gone is removed.
func (s *Store) CatchUp(ctx context.Context) (int, error) {
	last, err := lastChange(ctx, s.db)
	if err != nil {
		return 0, err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if last <= s.applied {
		return 0, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT seq, id FROM changes WHERE seq > ? ORDER BY seq`, s.applied)
	if err != nil {
		return 0, fmt.Errorf("read the changes log: %w", err)
	}
	var (
		ids   []string
		first int64
		top   = s.applied
	)
	for rows.Next() {
		var seq int64
		var id string
		if err := rows.Scan(&seq, &id); err != nil {
			rows.Close()
			return 0, fmt.Errorf("read the changes log: %w", err)
		}
		if first == 0 {
			first = seq
		}
		top = seq
		if !slices.ContainsFunc(s.own, func(o ownChanges) bool { return seq >= o.first && seq <= o.last }) {
			ids = append(ids, id)
		}
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return 0, fmt.Errorf("read the changes log: %w", err)
	}
	rows.Close()
	if first > s.applied+1 && s.applied > 0 {
		// The log was trimmed past what this Store applied: load it all.
		if err := s.reload(ctx); err != nil {
			return 0, err
		}
		return len(ids), nil
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if err := s.apply(ctx, ids); err != nil {
		return 0, err
	}
	s.applied = top
	s.own = slices.DeleteFunc(s.own, func(o ownChanges) bool { return o.last <= top })
	return len(ids), nil
}

// apply puts ids into the index as the file holds them, removing those it
// no longer holds. The caller holds s.writeMu.
func (s *Store) apply(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	var entries []entry
	found := map[string]bool{}
	err := s.eachByID(ctx, paperColumns+`, terms, vector`, ids, func(row scanner) error {
		var (
			terms string
			blob  []byte
		)
		p, err := scanPaper(row, &terms, &blob)
		if err != nil {
			return err
		}
		if len(blob) != 4*s.model.Dim {
			return fmt.Errorf("paper %s: %d bytes of vector, want %d", p.ID, len(blob), 4*s.model.Dim)
		}
		found[p.ID] = true
		entries = append(entries, entry{paper: p, vector: embed.DecodeVector(blob), terms: strings.Fields(terms)})
		return nil
	})
	if err != nil {
		return fmt.Errorf("apply other processes' changes: %w", err)
	}
	x := s.idx.Load()
	compact := x.put(entries)
	for _, id := range ids {
		if !found[id] {
			compact = x.remove(id) || compact
		}
	}
	if compact {
		return s.compact(ctx)
	}
	return nil
}

// reload loads the index again from the file and swaps it in, with every
// change up to now applied (a change committed during the load may be
// applied again later: putting a paper as the file holds it twice is
// harmless). The caller holds s.writeMu, or is opening the store.
func (s *Store) reload(ctx context.Context) error {
	last, err := lastChange(ctx, s.db)
	if err != nil {
		return err
	}
	x, err := s.load(ctx)
	if err != nil {
		return err
	}
	s.idx.Store(x)
	s.applied, s.own = last, nil
	return nil
}
