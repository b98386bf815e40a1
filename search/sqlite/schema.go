package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/storage"
)

// schemaVersion is the layout of the store's tables. Version 2 added the
// analysed terms of each paper, version 3 its tags, version 4 its sources
// and the work_keys table, version 5 the sentences table, version 6 marks
// sentence vectors as pooled from each paper's encoder pass (see upgradeFrom),
// version 7 analyses text with accents folded (its terms are analysed
// again: reanalyse), version 8 adds each paper's type, version 9 its date
// and when it was added (the papers of an older store count as added when
// it was upgraded), version 10 the changes log other processes follow
// (follow.go) and the records table of the service's own state, version
// 11 work keys folded by papersearch.Fold (ø, ł, ß, æ… spelled in ASCII
// as the lexical analyser spells them; fillWorkKeys makes them again), version 12 keeps sentences in a rowid table
// (sentencesTable says why).
const schemaVersion = 12

// upgradeFrom is the change from schema version v to the next.
func upgradeFrom(v int) string {
	switch v {
	case 1:
		return `ALTER TABLE papers ADD COLUMN terms TEXT NOT NULL DEFAULT ''` // load fills them in
	case 2:
		return `ALTER TABLE papers ADD COLUMN tags TEXT NOT NULL DEFAULT ''`
	case 3: // upgrade fills work_keys in
		return `ALTER TABLE papers ADD COLUMN sources TEXT NOT NULL DEFAULT ''`
	case 4: // the sentences table is created with the schema; papers get sentences when re-embedded
		return `SELECT 1`
	case 9: // the changes and records tables are created with the schema
		return `SELECT 1`
	case 10: // fillWorkKeys makes every paper's work keys again
		return `SELECT 1`
	case 11: // the same rows, in a table keyed by rowid (see sentencesTable)
		return strings.Replace(sentencesTable, "sentences", "sentences_by_rowid", 1) + `;
			INSERT INTO sentences_by_rowid (id, roles, vectors) SELECT id, roles, vectors FROM sentences;
			DROP TABLE sentences;
			ALTER TABLE sentences_by_rowid RENAME TO sentences`
	case 6: // reanalyse fills the terms in again
		return `SELECT 1`
	case 7:
		return `ALTER TABLE papers ADD COLUMN type TEXT NOT NULL DEFAULT ''`
	case 8:
		return `ALTER TABLE papers ADD COLUMN date TEXT NOT NULL DEFAULT '';
			ALTER TABLE papers ADD COLUMN added INTEGER NOT NULL DEFAULT 0;
			UPDATE papers SET added = CAST(strftime('%s', 'now') AS INTEGER) WHERE added = 0`
	default: // 5: its sentence vectors were each embedded on its own, which vectors pooled from the
		// paper's encoder pass replace: drop them, and forget every paper's hash so that the next
		// ingest of a paper embeds it again (catalog.Catalog.Ingest re-embeds a paper stored without
		// sentence vectors) instead of skipping it as unchanged.
		return `DELETE FROM sentences; UPDATE papers SET paper_hash = ''`
	}
}

// sentencesTable keeps the abstract's sentences of each paper
// (storage.Sentence): their roles, one digit each, and their vectors, each a
// float32 scale and int8 codes, about 10 KB a paper. It is keyed by rowid,
// with an index of ids beside it: as a WITHOUT ROWID table (schema versions 5
// to 11) every key compared on the way down its b-tree was a whole row,
// overflow pages and all, so reading 150 papers' sentences read each
// paper's pages a dozen times over.
const sentencesTable = `CREATE TABLE IF NOT EXISTS sentences (
	id      TEXT PRIMARY KEY,
	roles   TEXT NOT NULL,
	vectors BLOB NOT NULL
)`

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
	terms      TEXT NOT NULL DEFAULT '',
	tags       TEXT NOT NULL DEFAULT '',
	sources    TEXT NOT NULL DEFAULT '',
	type       TEXT NOT NULL DEFAULT '',
	date       TEXT NOT NULL DEFAULT '',
	added      INTEGER NOT NULL DEFAULT 0
);
-- The keys naming the work each paper is a version of
-- (papersearch.WorkKeys), to find the stored versions of an arriving one.
CREATE TABLE IF NOT EXISTS work_keys (
	key TEXT NOT NULL,
	id  TEXT NOT NULL,
	PRIMARY KEY (key, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS work_keys_id ON work_keys (id);
` + sentencesTable + `;
-- The ids each committed change touched, in order, for the other
-- processes that have the file open to apply (follow.go).
CREATE TABLE IF NOT EXISTS changes (
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	id  TEXT NOT NULL
);
-- The service's own state beside the papers (storage.Records): alerts,
-- keys, by kind and id.
CREATE TABLE IF NOT EXISTS records (
	kind TEXT NOT NULL,
	id   TEXT NOT NULL,
	doc  BLOB NOT NULL,
	PRIMARY KEY (kind, id)
) WITHOUT ROWID;`

func (s *Store) init(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	meta, err := readMeta(ctx, s.db)
	if err != nil {
		return err
	}
	if v := meta["schema_version"]; v != "" {
		if err := s.upgrade(ctx, v); err != nil {
			return err
		}
	}
	if stored, ok := meta.model(); ok {
		if err := storage.CheckModel("the index", stored, s.model); err != nil {
			return err
		}
	} else {
		_, err := s.db.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('schema_version', ?), ('model', ?), ('dim', ?)`,
			strconv.Itoa(schemaVersion), s.model.Name, strconv.Itoa(s.model.Dim))
		if err != nil {
			return fmt.Errorf("record model: %w", err)
		}
	}
	return s.reload(ctx)
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

// upgrade brings a store of schema version v to schemaVersion, one version
// at a time, in one transaction.
func (s *Store) upgrade(ctx context.Context, v string) error {
	from, err := strconv.Atoi(v)
	if err != nil || from < 1 || from > schemaVersion {
		return fmt.Errorf("store schema version %s, this build reads %d", v, schemaVersion)
	}
	if from == schemaVersion {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("upgrade schema: %w", err)
	}
	defer tx.Rollback()
	keyed, folded := from >= 11, from >= 7
	for ; from < schemaVersion; from++ {
		if err := execUpgrade(ctx, tx, upgradeFrom(from)); err != nil {
			return fmt.Errorf("upgrade schema from version %d: %w", from, err)
		}
	}
	if !keyed {
		if err := fillWorkKeys(ctx, tx); err != nil {
			return fmt.Errorf("upgrade schema: %w", err)
		}
	}
	if !folded {
		if err := reanalyse(ctx, tx); err != nil {
			return fmt.Errorf("upgrade schema: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = 'schema_version'`, strconv.Itoa(schemaVersion)); err != nil {
		return fmt.Errorf("upgrade schema: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("upgrade schema: %w", err)
	}
	return nil
}

// addColumn is an upgrade statement adding a column: its table and name.
var addColumn = regexp.MustCompile(`(?is)^\s*ALTER\s+TABLE\s+(\w+)\s+ADD\s+COLUMN\s+(\w+)\b`) // read-only after init

// execUpgrade runs the statements of one upgrade step, ';'-separated,
// passing over a column it adds that the table already has (a store whose
// upgrade was interrupted, or one written by a later build and moved back).
func execUpgrade(ctx context.Context, tx *sql.Tx, stmts string) error {
	for _, stmt := range strings.Split(stmts, ";") {
		if m := addColumn.FindStringSubmatch(stmt); m != nil {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?`, m[1], m[2]).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				continue
			}
		}
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// fillWorkKeys records the work keys of every paper, replacing those it
// has (stores written before schema version 4 kept none, before 11 folded
// fewer letters).
func fillWorkKeys(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT `+paperColumns+` FROM papers`)
	if err != nil {
		return fmt.Errorf("work keys: %w", err)
	}
	var papers []papersearch.Paper
	for rows.Next() {
		p, err := scanPaper(rows)
		if err != nil {
			rows.Close()
			return fmt.Errorf("work keys: %w", err)
		}
		papers = append(papers, papersearch.Paper{ID: p.ID, Title: p.Title, Authors: p.Authors, Sources: p.Sources})
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("work keys: %w", err)
	}
	for _, p := range papers {
		if err := putWorkKeys(ctx, tx, p); err != nil {
			return err
		}
	}
	return nil
}

// reanalyse stores every paper's terms as the analyser of this version
// makes them (an upgrade may follow a change of the analyser: version 7
// folds accents, so "naïve" and "naive" are one term).
func reanalyse(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, title, abstract FROM papers`)
	if err != nil {
		return fmt.Errorf("analyse terms: %w", err)
	}
	type text struct{ id, terms string }
	var all []text
	for rows.Next() {
		var p papersearch.Paper
		if err := rows.Scan(&p.ID, &p.Title, &p.Abstract); err != nil {
			rows.Close()
			return fmt.Errorf("analyse terms: %w", err)
		}
		all = append(all, text{p.ID, strings.Join(lexical.Analyze(p.Text()), " ")})
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("analyse terms: %w", err)
	}
	for _, t := range all {
		if _, err := tx.ExecContext(ctx, `UPDATE papers SET terms = ? WHERE id = ?`, t.terms, t.id); err != nil {
			return fmt.Errorf("analyse the terms of %s: %w", t.id, err)
		}
	}
	return nil
}

// putWorkKeys replaces the work keys recorded for p.
func putWorkKeys(ctx context.Context, tx *sql.Tx, p papersearch.Paper) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM work_keys WHERE id = ?`, p.ID); err != nil {
		return fmt.Errorf("work keys of %s: %w", p.ID, err)
	}
	for _, k := range papersearch.WorkKeys(p) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO work_keys (key, id) VALUES (?, ?)`, k, p.ID); err != nil {
			return fmt.Errorf("work keys of %s: %w", p.ID, err)
		}
	}
	return nil
}
