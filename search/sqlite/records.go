package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/papersearch/papersearch/search/storage"
)

// PutRecord keeps a record in the file's records table.
func (s *Store) PutRecord(ctx context.Context, kind, id string, doc []byte) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO records (kind, id, doc) VALUES (?, ?, ?)
		ON CONFLICT(kind, id) DO UPDATE SET doc = excluded.doc`, kind, id, doc)
	if err != nil {
		return fmt.Errorf("keep the %s %q: %w", kind, id, err)
	}
	return nil
}

// GetRecord reads a record.
func (s *Store) GetRecord(ctx context.Context, kind, id string) ([]byte, error) {
	var doc []byte
	err := s.db.QueryRowContext(ctx, `SELECT doc FROM records WHERE kind = ? AND id = ?`, kind, id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s %q", storage.ErrNotFound, kind, id)
	}
	if err != nil {
		return nil, fmt.Errorf("read the %s %q: %w", kind, id, err)
	}
	return doc, nil
}

// ListRecords reads every record of a kind.
func (s *Store) ListRecords(ctx context.Context, kind string) (map[string][]byte, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, doc FROM records WHERE kind = ?`, kind)
	if err != nil {
		return nil, fmt.Errorf("read the %s records: %w", kind, err)
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var id string
		var doc []byte
		if err := rows.Scan(&id, &doc); err != nil {
			return nil, fmt.Errorf("read the %s records: %w", kind, err)
		}
		out[id] = doc
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the %s records: %w", kind, err)
	}
	return out, nil
}

// DeleteRecord removes a record.
func (s *Store) DeleteRecord(ctx context.Context, kind, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM records WHERE kind = ? AND id = ?`, kind, id)
	if err != nil {
		return fmt.Errorf("remove the %s %q: %w", kind, id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w: %s %q", storage.ErrNotFound, kind, id)
	}
	return nil
}

var _ storage.Records = (*Store)(nil)

// CopyRecords copies every record of from into s (reindex's new store
// takes the old one's alerts and keys), replacing any s holds of the same
// kind and id, and returns how many it copied.
func (s *Store) CopyRecords(ctx context.Context, from *Store) (int, error) {
	rows, err := from.db.QueryContext(ctx, `SELECT kind, id, doc FROM records`)
	if err != nil {
		return 0, fmt.Errorf("copy the records: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var kind, id string
		var doc []byte
		if err := rows.Scan(&kind, &id, &doc); err != nil {
			return n, fmt.Errorf("copy the records: %w", err)
		}
		if err := s.PutRecord(ctx, kind, id, doc); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}
