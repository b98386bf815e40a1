package imports

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"
)

// watchSchema is the table of watches: each one's request, where its
// next run goes on from, the lease of the process running it, and how its
// last run went. Times are Unix milliseconds.
const watchSchema = `
CREATE TABLE IF NOT EXISTS watches (
	id TEXT PRIMARY KEY,
	source TEXT NOT NULL,
	target TEXT NOT NULL,
	every_ms INTEGER NOT NULL,
	every TEXT NOT NULL,
	tags TEXT NOT NULL,
	max INTEGER NOT NULL,
	created INTEGER NOT NULL,
	since TEXT NOT NULL DEFAULT '',
	position TEXT NOT NULL DEFAULT '',
	run_newest TEXT NOT NULL DEFAULT '',
	next_run INTEGER NOT NULL,
	lease_until INTEGER NOT NULL DEFAULT 0,
	lease_owner TEXT NOT NULL DEFAULT '',
	runs INTEGER NOT NULL DEFAULT 0,
	last_started INTEGER NOT NULL DEFAULT 0,
	last_finished INTEGER NOT NULL DEFAULT 0,
	last_read INTEGER NOT NULL DEFAULT 0,
	last_added INTEGER NOT NULL DEFAULT 0,
	last_error TEXT NOT NULL DEFAULT ''
)`

// watchStore keeps the watches of a data folder in one SQLite file, which
// every process on that folder shares: the command line adds to it while
// the server runs, and a lease in it keeps two processes from running one
// watch at once.
type watchStore struct {
	db *sql.DB
}

// openWatchStore opens (creating) the watches file at path.
func openWatchStore(ctx context.Context, path string) (*watchStore, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("open the watches: %w", err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)")
	if err != nil {
		return nil, fmt.Errorf("open the watches: %w", err)
	}
	if _, err := db.ExecContext(ctx, watchSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open the watches in %s: %w", path, err)
	}
	return &watchStore{db: db}, nil
}

func (s *watchStore) close() error { return s.db.Close() }

// watchRow is a watch as stored.
type watchRow struct {
	Watch
	every      time.Duration
	runNewest  string
	leaseUntil time.Time
}

const watchColumns = `id, source, target, every_ms, every, tags, max, created, since, position, run_newest, next_run,
	lease_until, runs, last_started, last_finished, last_read, last_added, last_error`

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// scanWatch reads a row of watchColumns.
func scanWatch(row interface{ Scan(...any) error }) (watchRow, error) {
	var (
		w                             watchRow
		everyMS, created, next, lease int64
		started, finished             int64
		tags                          string
	)
	err := row.Scan(&w.ID, &w.Source, &w.Target, &everyMS, &w.Every, &tags, &w.Max, &created, &w.Since, &w.Position, &w.runNewest,
		&next, &lease, &w.Runs, &started, &finished, &w.LastRead, &w.LastAdded, &w.LastError)
	if err != nil {
		return w, err
	}
	if err := json.Unmarshal([]byte(tags), &w.Tags); err != nil {
		return w, fmt.Errorf("watch %s: its tags: %w", w.ID, err)
	}
	w.every, w.Created, w.NextRun, w.leaseUntil = time.Duration(everyMS)*time.Millisecond, fromMS(created), fromMS(next), fromMS(lease)
	if t := fromMS(started); !t.IsZero() {
		w.LastStarted = &t
	}
	if t := fromMS(finished); !t.IsZero() {
		w.LastFinished = &t
	}
	return w, nil
}

// add stores a new watch.
func (s *watchStore) add(ctx context.Context, w watchRow) error {
	tags, err := json.Marshal(w.Tags)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO watches (id, source, target, every_ms, every, tags, max, created, since, next_run)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		w.ID, w.Source, w.Target, w.every.Milliseconds(), w.Every, string(tags), w.Max, ms(w.Created), w.Since, ms(w.NextRun))
	if err != nil {
		return fmt.Errorf("keep the watch: %w", err)
	}
	return nil
}

// list returns the watches, oldest first.
func (s *watchStore) list(ctx context.Context) ([]watchRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+watchColumns+` FROM watches ORDER BY created, id`)
	if err != nil {
		return nil, fmt.Errorf("read the watches: %w", err)
	}
	defer rows.Close()
	var out []watchRow
	for rows.Next() {
		w, err := scanWatch(rows)
		if err != nil {
			return nil, fmt.Errorf("read the watches: %w", err)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the watches: %w", err)
	}
	return out, nil
}

// get returns the watch of that id, or ErrNoWatch.
func (s *watchStore) get(ctx context.Context, id string) (watchRow, error) {
	w, err := scanWatch(s.db.QueryRowContext(ctx, `SELECT `+watchColumns+` FROM watches WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return w, fmt.Errorf("%w %q", ErrNoWatch, id)
	}
	if err != nil {
		return w, fmt.Errorf("read the watch %s: %w", id, err)
	}
	return w, nil
}

// remove deletes the watch of that id, or answers ErrNoWatch.
func (s *watchStore) remove(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM watches WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete the watch %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w %q", ErrNoWatch, id)
	}
	return nil
}

// due lists the ids of the watches due at now that no process runs.
func (s *watchStore) due(ctx context.Context, now time.Time) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM watches WHERE next_run <= ? AND lease_until < ? ORDER BY next_run, id`, ms(now), ms(now))
	if err != nil {
		return nil, fmt.Errorf("read the due watches: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// claim takes the lease of a due watch for owner until now+ttl, and
// reports whether it did: false when the watch is gone, not due, or
// leased by a process whose lease has not run out.
func (s *watchStore) claim(ctx context.Context, id, owner string, now time.Time, ttl time.Duration) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE watches SET lease_until = ?, lease_owner = ?, last_started = ?
		WHERE id = ? AND next_run <= ? AND lease_until < ?`, ms(now.Add(ttl)), owner, ms(now), id, ms(now), ms(now))
	if err != nil {
		return false, fmt.Errorf("claim the watch %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// renew extends owner's lease of a watch to until; false if owner no
// longer holds it.
func (s *watchStore) renew(ctx context.Context, id, owner string, until time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE watches SET lease_until = ? WHERE id = ? AND lease_owner = ?`, ms(until), id, owner)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// noteNewest records the newest date a run has read so far, so that a
// run resumed after an interruption still knows it.
func (s *watchStore) noteNewest(ctx context.Context, id, owner, newest string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE watches SET run_newest = ? WHERE id = ? AND lease_owner = ?`, newest, id, owner)
	return err
}

// runEnd is how a run ended, as finish records it.
type runEnd struct {
	// Completed: the run read its source to the end (or to its max);
	// Since and Position then become where the next run goes on from.
	Completed       bool
	Since, Position string
	Read, Added     int
	Err             string
	NextRun         time.Time
	Finished        time.Time
}

// finish records the end of owner's run of a watch and gives up its
// lease. A run that was stopped (the process shutting down) records
// nothing but the lease: the watch stays due, and its next run resumes
// from the checkpoint.
func (s *watchStore) finish(ctx context.Context, id, owner string, end runEnd, stopped bool) error {
	var err error
	switch {
	case stopped:
		_, err = s.db.ExecContext(ctx, `UPDATE watches SET lease_until = 0, lease_owner = '' WHERE id = ? AND lease_owner = ?`, id, owner)
	case end.Completed:
		_, err = s.db.ExecContext(ctx, `UPDATE watches SET lease_until = 0, lease_owner = '', since = ?, position = ?, run_newest = '',
			runs = runs + 1, last_finished = ?, last_read = ?, last_added = ?, last_error = '', next_run = ?
			WHERE id = ? AND lease_owner = ?`,
			end.Since, end.Position, ms(end.Finished), end.Read, end.Added, ms(end.NextRun), id, owner)
	default:
		_, err = s.db.ExecContext(ctx, `UPDATE watches SET lease_until = 0, lease_owner = '',
			runs = runs + 1, last_finished = ?, last_read = ?, last_added = ?, last_error = ?, next_run = ?
			WHERE id = ? AND lease_owner = ?`,
			ms(end.Finished), end.Read, end.Added, end.Err, ms(end.NextRun), id, owner)
	}
	if err != nil {
		return fmt.Errorf("record the run of watch %s: %w", id, err)
	}
	return nil
}

// runNow makes a watch due at now.
func (s *watchStore) runNow(ctx context.Context, id string, now time.Time) error {
	res, err := s.db.ExecContext(ctx, `UPDATE watches SET next_run = ? WHERE id = ?`, ms(now), id)
	if err != nil {
		return fmt.Errorf("run the watch %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w %q", ErrNoWatch, id)
	}
	return nil
}

// CopyWatches copies the watches kept in the SQLite file at from (an
// earlier version's watches.db in the data folder, or a store being
// replaced by reindex) into the one at to, keeping any watch to holds
// already, and returns how many it copied; a file without watches is
// nothing to copy.
func CopyWatches(ctx context.Context, from, to string) (int, error) {
	if _, err := os.Stat(from); errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	dst, err := openWatchStore(ctx, to)
	if err != nil {
		return 0, err
	}
	defer dst.close()
	conn, err := dst.db.Conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("copy the watches: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `ATTACH DATABASE ? AS old`, "file:"+from+"?mode=ro"); err != nil {
		return 0, fmt.Errorf("copy the watches of %s: %w", from, err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `DETACH DATABASE old`)
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM old.sqlite_master WHERE type = 'table' AND name = 'watches'`).Scan(&n); err != nil || n == 0 {
		return 0, err
	}
	res, err := conn.ExecContext(ctx, `INSERT OR IGNORE INTO watches (`+watchTableColumns+`) SELECT `+watchTableColumns+` FROM old.watches`)
	if err != nil {
		return 0, fmt.Errorf("copy the watches of %s: %w", from, err)
	}
	copied, _ := res.RowsAffected()
	return int(copied), nil
}

// watchTableColumns are every column of the watches table.
const watchTableColumns = `id, source, target, every_ms, every, tags, max, created, since, position, run_newest, next_run,
	lease_until, lease_owner, runs, last_started, last_finished, last_read, last_added, last_error`
