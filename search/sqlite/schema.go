package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
)

// schemaVersion is the layout of the store's tables. Version 2 added the
// analysed terms of each paper.
const schemaVersion = 2

const schema = `
CREATE TABLE IF NOT EXISTS meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS papers (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT,
	id         TEXT NOT NULL UNIQUE,
	title      TEXT NOT NULL,
	abstract   TEXT NOT NULL,
	authors    TEXT NOT NULL,
	venue      TEXT NOT NULL,
	year       INTEGER NOT NULL,
	url        TEXT NOT NULL,
	text_hash  TEXT NOT NULL,
	paper_hash TEXT NOT NULL,
	vector     BLOB NOT NULL,
	terms      TEXT NOT NULL DEFAULT ''
);`

func (s *Store) init(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	meta, err := readMeta(ctx, s.db)
	if err != nil {
		return err
	}
	switch v := meta["schema_version"]; v {
	case "", strconv.Itoa(schemaVersion):
	case "1":
		// Version 1 lacked the terms column; load fills it in.
		if _, err := s.db.ExecContext(ctx, `ALTER TABLE papers ADD COLUMN terms TEXT NOT NULL DEFAULT ''`); err != nil {
			return fmt.Errorf("upgrade schema: %w", err)
		}
		if _, err := s.db.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = 'schema_version'`, strconv.Itoa(schemaVersion)); err != nil {
			return fmt.Errorf("upgrade schema: %w", err)
		}
	default:
		return fmt.Errorf("store schema version %s, this build reads %d", v, schemaVersion)
	}
	if stored, ok := meta.model(); ok {
		if err := search.CheckModel("the index", stored, s.model); err != nil {
			return err
		}
	} else {
		_, err := s.db.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('schema_version', ?), ('model', ?), ('dim', ?)`,
			strconv.Itoa(schemaVersion), s.model.Name, strconv.Itoa(s.model.Dim))
		if err != nil {
			return fmt.Errorf("record model: %w", err)
		}
	}
	x, err := s.load(ctx)
	if err != nil {
		return err
	}
	s.idx.Store(x)
	return nil
}

// meta is the store's meta table.
type meta map[string]string

func readMeta(ctx context.Context, db *sql.DB) (meta, error) {
	m := meta{}
	rows, err := db.QueryContext(ctx, `SELECT key, value FROM meta`)
	if err != nil {
		return nil, fmt.Errorf("read meta: %w", err)
	}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read meta: %w", err)
		}
		m[k] = v
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("read meta: %w", err)
	}
	return m, nil
}

// model is the model recorded in the store, if one is.
func (m meta) model() (embed.ModelInfo, bool) {
	name, ok := m["model"]
	dim, _ := strconv.Atoi(m["dim"])
	return embed.ModelInfo{Name: name, Dim: dim}, ok
}
