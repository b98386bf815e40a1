package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Readers' connections. database/sql keeps two idle; past them each
// connection a burst of concurrent readers opened was closed as it was put
// back, and the next burst paid for new ones: opening the file, reading the
// schema, preparing every statement again, and a page cache that starts
// empty and fills by pread. idleConns are kept, each closed after
// idleConnLife unused; each connection's page cache is cacheKiB KiB
// (SQLite's default is 2,000): the reads it serves are of a few random
// papers, whose pages a small cache holds as seldom as a large one, and
// sixteen connections of 2 MB each were 60 MiB of a 29,100-paper server's
// peak (docs/performance.md).
const (
	idleConns    = 4
	idleConnLife = 5 * time.Minute
	cacheKiB     = 512
)

// statements are the store's read statements, each prepared once (and by
// database/sql once a connection) instead of parsed again by every call.
// The queries are the package's own constants, so the map stays small.
type statements struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// prepared returns query's statement, preparing it the first time.
func (s *Store) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	s.stmts.mu.Lock()
	defer s.stmts.mu.Unlock()
	if st, ok := s.stmts.m[query]; ok {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if s.stmts.m == nil {
		s.stmts.m = map[string]*sql.Stmt{}
	}
	s.stmts.m[query] = st
	return st, nil
}

// closeStatements closes every prepared statement.
func (s *Store) closeStatements() error {
	s.stmts.mu.Lock()
	defer s.stmts.mu.Unlock()
	var errs []error
	for _, st := range s.stmts.m {
		errs = append(errs, st.Close())
	}
	s.stmts.m = nil
	return errors.Join(errs...)
}

// queryIn runs `query IN (keys)` as one prepared statement whatever the
// number of keys: they are bound as one JSON array that json_each reads.
func (s *Store) queryIn(ctx context.Context, query string, keys []string) (*sql.Rows, error) {
	st, err := s.prepared(ctx, query+` IN (SELECT value FROM json_each(?))`)
	if err != nil {
		return nil, err
	}
	list, err := json.Marshal(keys)
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	return st.QueryContext(ctx, string(list))
}
