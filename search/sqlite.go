package search

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"

	_ "modernc.org/sqlite" // pure-Go SQLite driver, registered as "sqlite"
)

// schemaVersion is the layout of the embedded store's tables.
const schemaVersion = 1

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
	vector     BLOB NOT NULL
);`

// SQLite is the embedded Store: one SQLite database file holding papers,
// vectors and the index metadata, with every vector also kept in one
// contiguous in-memory matrix that dense retrieval scans exactly.
type SQLite struct {
	db    *sql.DB
	path  string
	model embed.ModelInfo

	mu      sync.RWMutex
	ids     []string       // row -> paper id
	rows    map[string]int // paper id -> row
	vectors []float32      // row-major, len(ids)*model.Dim
}

// OpenSQLite opens or creates the store at path for vectors of model. A
// store built with another model or dimension is refused with an error
// wrapping ErrModelMismatch.
func OpenSQLite(ctx context.Context, path string, model embed.ModelInfo) (*SQLite, error) {
	if model.Name == "" || model.Dim <= 0 {
		return nil, fmt.Errorf("open store: invalid model %+v", model)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s := &SQLite{db: db, path: path, model: model, rows: map[string]int{}}
	if err := s.init(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

func (s *SQLite) init(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	meta := map[string]string{}
	rows, err := s.db.QueryContext(ctx, `SELECT key, value FROM meta`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return err
		}
		meta[k] = v
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	if v, ok := meta["schema_version"]; ok && v != strconv.Itoa(schemaVersion) {
		return fmt.Errorf("store schema version %s, this build reads %d", v, schemaVersion)
	}
	if name, ok := meta["model"]; ok {
		dim, _ := strconv.Atoi(meta["dim"])
		if name != s.model.Name || dim != s.model.Dim {
			return fmt.Errorf("%w: the index holds %s (%d dimensions), the embedder is %s (%d dimensions)",
				ErrModelMismatch, name, dim, s.model.Name, s.model.Dim)
		}
	} else {
		_, err := s.db.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('schema_version', ?), ('model', ?), ('dim', ?)`,
			strconv.Itoa(schemaVersion), s.model.Name, strconv.Itoa(s.model.Dim))
		if err != nil {
			return fmt.Errorf("record model: %w", err)
		}
	}
	return s.load(ctx)
}

// load reads every vector into the in-memory matrix.
func (s *SQLite) load(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `SELECT id, vector FROM papers ORDER BY seq`)
	if err != nil {
		return fmt.Errorf("load vectors: %w", err)
	}
	defer rows.Close()
	dim := s.model.Dim
	for rows.Next() {
		var (
			id   string
			blob []byte
		)
		if err := rows.Scan(&id, &blob); err != nil {
			return fmt.Errorf("load vectors: %w", err)
		}
		if len(blob) != 4*dim {
			return fmt.Errorf("load vectors: paper %s: %w: %d bytes, want %d", id, ErrDimension, len(blob), 4*dim)
		}
		s.rows[id] = len(s.ids)
		s.ids = append(s.ids, id)
		s.vectors = appendVector(s.vectors, blob)
	}
	return rows.Err()
}

// Kind returns "embedded".
func (s *SQLite) Kind() string { return "embedded" }

// Model returns the model the store's vectors come from.
func (s *SQLite) Model() embed.ModelInfo { return s.model }

// Path returns the database file's path.
func (s *SQLite) Path() string { return s.path }

// Close closes the database.
func (s *SQLite) Close() error { return s.db.Close() }

// Upsert writes docs in one transaction, then updates the in-memory matrix.
func (s *SQLite) Upsert(ctx context.Context, docs []Document) error {
	if len(docs) == 0 {
		return nil
	}
	for _, d := range docs {
		if len(d.Vector) != s.model.Dim {
			return fmt.Errorf("upsert %s: %w: %d, want %d", d.Paper.ID, ErrDimension, len(d.Vector), s.model.Dim)
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO papers (id, title, abstract, authors, venue, year, url, text_hash, paper_hash, vector)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET title=excluded.title, abstract=excluded.abstract, authors=excluded.authors,
			venue=excluded.venue, year=excluded.year, url=excluded.url, text_hash=excluded.text_hash,
			paper_hash=excluded.paper_hash, vector=excluded.vector`)
	if err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	defer stmt.Close()
	for _, d := range docs {
		p := d.Paper
		authors, err := json.Marshal(nonNil(p.Authors))
		if err != nil {
			return fmt.Errorf("upsert %s: %w", p.ID, err)
		}
		if _, err := stmt.ExecContext(ctx, p.ID, p.Title, p.Abstract, string(authors), p.Venue, p.Year, p.URL,
			d.TextHash, d.PaperHash, vectorBlob(d.Vector)); err != nil {
			return fmt.Errorf("upsert %s: %w", p.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("upsert: commit: %w", err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	dim := s.model.Dim
	for _, d := range docs {
		if r, ok := s.rows[d.Paper.ID]; ok {
			copy(s.vectors[r*dim:(r+1)*dim], d.Vector)
			continue
		}
		s.rows[d.Paper.ID] = len(s.ids)
		s.ids = append(s.ids, d.Paper.ID)
		s.vectors = append(s.vectors, d.Vector...)
	}
	return nil
}

const documentColumns = `id, title, abstract, authors, venue, year, url, text_hash, paper_hash, vector`

// scanDocument reads one row of documentColumns (with extra destinations
// after them, if any).
func scanDocument(row interface{ Scan(...any) error }, extra ...any) (Document, error) {
	var (
		d       Document
		authors string
		blob    []byte
	)
	dest := append([]any{&d.Paper.ID, &d.Paper.Title, &d.Paper.Abstract, &authors,
		&d.Paper.Venue, &d.Paper.Year, &d.Paper.URL, &d.TextHash, &d.PaperHash, &blob}, extra...)
	if err := row.Scan(dest...); err != nil {
		return Document{}, err
	}
	if err := json.Unmarshal([]byte(authors), &d.Paper.Authors); err != nil {
		return Document{}, fmt.Errorf("paper %q: authors: %w", d.Paper.ID, err)
	}
	d.Vector = appendVector(nil, blob)
	return d, nil
}

// Get returns one document.
func (s *SQLite) Get(ctx context.Context, id string) (Document, error) {
	d, err := scanDocument(s.db.QueryRowContext(ctx, `SELECT `+documentColumns+` FROM papers WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Document{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return Document{}, fmt.Errorf("get %q: %w", id, err)
	}
	return d, nil
}

// Lookup returns the papers of those ids that exist.
func (s *SQLite) Lookup(ctx context.Context, ids []string) (map[string]papersearch.Paper, error) {
	out := make(map[string]papersearch.Paper, len(ids))
	for start := 0; start < len(ids); start += 500 {
		part := ids[start:min(start+500, len(ids))]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		rows, err := s.db.QueryContext(ctx, `SELECT `+documentColumns+` FROM papers WHERE id IN (?`+strings.Repeat(",?", len(part)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("lookup: %w", err)
		}
		for rows.Next() {
			d, err := scanDocument(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("lookup: %w", err)
			}
			out[d.Paper.ID] = d.Paper
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, fmt.Errorf("lookup: %w", err)
		}
	}
	return out, nil
}

// Scroll pages through documents in insertion order; the cursor is the
// last row's sequence number.
func (s *SQLite) Scroll(ctx context.Context, cursor string, limit int) ([]Document, string, error) {
	after := int64(0)
	if cursor != "" {
		var err error
		if after, err = strconv.ParseInt(cursor, 10, 64); err != nil || after < 0 {
			return nil, "", fmt.Errorf("scroll: invalid cursor %q", cursor)
		}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+documentColumns+`, seq FROM papers WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, "", fmt.Errorf("scroll: %w", err)
	}
	defer rows.Close()
	var (
		docs []Document
		seq  int64
	)
	for rows.Next() {
		d, err := scanDocument(rows, &seq)
		if err != nil {
			return nil, "", fmt.Errorf("scroll: %w", err)
		}
		docs = append(docs, d)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("scroll: %w", err)
	}
	if len(docs) < limit {
		return docs, "", nil
	}
	return docs, strconv.FormatInt(seq, 10), nil
}

// StoredModel reports the model recorded in the store file at path, without
// opening it for use. It returns ErrNotFound when path has no store.
func StoredModel(ctx context.Context, path string) (embed.ModelInfo, error) {
	if _, err := os.Stat(path); err != nil {
		return embed.ModelInfo{}, fmt.Errorf("%w: no store at %s", ErrNotFound, path)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return embed.ModelInfo{}, err
	}
	defer db.Close()
	var m embed.ModelInfo
	var dim string
	err = db.QueryRowContext(ctx, `SELECT (SELECT value FROM meta WHERE key = 'model'), (SELECT value FROM meta WHERE key = 'dim')`).Scan(&m.Name, &dim)
	if err != nil {
		return m, fmt.Errorf("read the model of %s: %w", path, err)
	}
	m.Dim, _ = strconv.Atoi(dim)
	return m, nil
}

// Fingerprints returns the stored hashes of the ids that exist.
func (s *SQLite) Fingerprints(ctx context.Context, ids []string) (map[string]Fingerprint, error) {
	out := make(map[string]Fingerprint, len(ids))
	const chunk = 500 // stay well under SQLite's bound-parameter limit
	for start := 0; start < len(ids); start += chunk {
		part := ids[start:min(start+chunk, len(ids))]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		q := `SELECT id, text_hash, paper_hash FROM papers WHERE id IN (?` + strings.Repeat(",?", len(part)-1) + `)`
		rows, err := s.db.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("fingerprints: %w", err)
		}
		for rows.Next() {
			var id string
			var f Fingerprint
			if err := rows.Scan(&id, &f.TextHash, &f.PaperHash); err != nil {
				rows.Close()
				return nil, fmt.Errorf("fingerprints: %w", err)
			}
			out[id] = f
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, fmt.Errorf("fingerprints: %w", err)
		}
	}
	return out, nil
}

// Nearest scans every vector exactly and keeps the k best.
func (s *SQLite) Nearest(ctx context.Context, v []float32, k int, exclude ...string) ([]Candidate, error) {
	dim := s.model.Dim
	if len(v) != dim {
		return nil, fmt.Errorf("nearest: %w: %d, want %d", ErrDimension, len(v), dim)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	top := newTopK(k)
	skip := map[int]bool{}
	for _, id := range exclude {
		if r, ok := s.rows[id]; ok {
			skip[r] = true
		}
	}
	for r, id := range s.ids {
		if r%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if skip[r] {
			continue
		}
		top.push(Candidate{ID: id, Score: embed.Dot(v, s.vectors[r*dim:(r+1)*dim])})
	}
	return top.sorted(), nil
}

// Delete removes one document.
func (s *SQLite) Delete(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM papers WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete %q: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rows[id]
	if !ok {
		return nil
	}
	// Move the last row into the hole.
	dim, last := s.model.Dim, len(s.ids)-1
	if r != last {
		copy(s.vectors[r*dim:(r+1)*dim], s.vectors[last*dim:(last+1)*dim])
		s.ids[r] = s.ids[last]
		s.rows[s.ids[r]] = r
	}
	s.ids = s.ids[:last]
	s.vectors = s.vectors[:last*dim]
	delete(s.rows, id)
	return nil
}

// Count returns the number of documents.
func (s *SQLite) Count(context.Context) (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.ids), nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func vectorBlob(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func appendVector(dst []float32, blob []byte) []float32 {
	for i := 0; i+4 <= len(blob); i += 4 {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(blob[i:])))
	}
	return dst
}

var _ Store = (*SQLite)(nil)
