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
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/lexical"

	_ "modernc.org/sqlite" // pure-Go SQLite driver, registered as "sqlite"
)

// schemaVersion is the layout of the embedded store's tables. Version 2
// added the analysed terms of each paper.
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

// SQLite is the embedded Store: one SQLite database file holding papers,
// vectors, analysed terms and the index metadata. In memory it keeps every
// vector in one contiguous matrix that dense retrieval scans exactly, the
// BM25 inverted index, and the fields filters test, all by row. Rows are
// append-only: replacing or deleting a paper retires its row, and the
// retired rows are dropped by a rebuild once they are a quarter of all.
type SQLite struct {
	db    *sql.DB
	model embed.ModelInfo

	// writeMu serialises changes, so the in-memory index applies them in
	// the order they were committed to the file; it is held for the whole
	// of a change, from the transaction to the last in-memory update.
	writeMu sync.Mutex
	// mu guards everything below; a change holds it while it updates memory.
	mu      sync.RWMutex
	ids     []string       // row -> paper id; "" for a retired row
	rows    map[string]int // paper id -> live row
	vectors []float32      // row-major, len(ids)*model.Dim
	codes   []int8         // the vectors quantised, row-major, for the first pass
	scales  []float32      // row -> the scale of its codes
	years   []int32        // row -> year
	venues  []string       // row -> venue, lower-cased
	authors [][][]string   // row -> author -> lower-case name words
	lex     *lexical.Index
	retired int

	scores sync.Pool // *[]float32 of BM25 scores by row

	inFlight atomic.Int32 // dense queries running now
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
	s := &SQLite{db: db, model: model}
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
	if name, ok := meta["model"]; ok {
		dim, _ := strconv.Atoi(meta["dim"])
		if err := sameModel("the index", embed.ModelInfo{Name: name, Dim: dim}, s.model); err != nil {
			return err
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

// load reads every paper's vector, terms and filter fields into memory,
// replacing what was there. The in-memory columns are sized from a count
// first and each vector is decoded in place, so a large store's opening
// peaks near its live size instead of twice it (slice doubling and a
// garbage vector per row).
func (s *SQLite) load(ctx context.Context) error {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM papers`).Scan(&n); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	s.reserve(n)
	// Title and abstract are read only for rows whose terms were never
	// stored (stores written before terms were), to analyse them once.
	rows, err := s.db.QueryContext(ctx, `SELECT id, authors, venue, year, terms, vector,
		CASE WHEN terms = '' THEN title ELSE '' END, CASE WHEN terms = '' THEN abstract ELSE '' END
		FROM papers ORDER BY seq`)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	defer rows.Close()
	type missing struct{ id, terms string }
	var fill []missing
	for loaded := 1; rows.Next(); loaded++ {
		// Each row leaves a little garbage (the driver's strings, the
		// terms' split); the collector, paced to the columns reserved above,
		// would let it pile up to their size. Collecting every
		// loadCollectEvery rows keeps the peak near the live size.
		if loaded%loadCollectEvery == 0 {
			runtime.GC()
		}
		var (
			p       papersearch.Paper
			authors string
			terms   string
			blob    sql.RawBytes
		)
		if err := rows.Scan(&p.ID, &authors, &p.Venue, &p.Year, &terms, &blob, &p.Title, &p.Abstract); err != nil {
			return fmt.Errorf("load: %w", err)
		}
		if len(blob) != 4*s.model.Dim {
			return fmt.Errorf("load: paper %s: %w: %d bytes, want %d", p.ID, ErrDimension, len(blob), 4*s.model.Dim)
		}
		if err := json.Unmarshal([]byte(authors), &p.Authors); err != nil {
			return fmt.Errorf("load: paper %s: authors: %w", p.ID, err)
		}
		if terms == "" {
			terms = strings.Join(lexical.Analyze(p.Text()), " ")
			fill = append(fill, missing{p.ID, terms})
		}
		start := len(s.vectors)
		s.vectors = append(s.vectors, make([]float32, s.model.Dim)...)
		vec := s.vectors[start:]
		for i := range vec {
			vec[i] = math.Float32frombits(binary.LittleEndian.Uint32(blob[4*i:]))
		}
		s.appendRow(p, vec, strings.Fields(terms))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	rows.Close()
	for _, m := range fill {
		if _, err := s.db.ExecContext(ctx, `UPDATE papers SET terms = ? WHERE id = ?`, m.terms, m.id); err != nil {
			return fmt.Errorf("load: store terms of %s: %w", m.id, err)
		}
	}
	s.lex.Commit()
	return nil
}

// loadCollectEvery is how many rows load reads between garbage
// collections: about 100 MB of vectors at 384 dimensions.
const loadCollectEvery = 65536

// reserve empties the in-memory columns, with room for n rows.
func (s *SQLite) reserve(n int) {
	dim := s.model.Dim
	s.ids, s.vectors = make([]string, 0, n), make([]float32, 0, n*dim)
	s.codes, s.scales = make([]int8, 0, n*dim), make([]float32, 0, n)
	s.years, s.venues, s.authors = make([]int32, 0, n), make([]string, 0, n), make([][][]string, 0, n)
	s.rows, s.lex, s.retired = make(map[string]int, n), lexical.NewIndex(n), 0
}

// appendRow adds a live paper at a new row, vec appended to the matrix
// unless it already is the matrix's next row (load decodes it there). The
// caller holds s.mu.
func (s *SQLite) appendRow(p papersearch.Paper, vec []float32, terms []string) {
	row := len(s.ids)
	s.rows[p.ID] = row
	s.ids = append(s.ids, p.ID)
	if len(s.vectors) == row*len(vec) {
		s.vectors = append(s.vectors, vec...)
	}
	s.codes = append(s.codes, make([]int8, len(vec))...)
	s.scales = append(s.scales, embed.Quantize(s.codes[row*len(vec):], vec))
	s.years = append(s.years, int32(p.Year))
	s.venues = append(s.venues, venueKey(p.Venue))
	names := make([][]string, len(p.Authors))
	for i, a := range p.Authors {
		names[i] = authorWords(a)
	}
	s.authors = append(s.authors, names)
	s.lex.Add(row, terms)
}

// retireRow takes a paper's row out of every retrieval. The caller holds s.mu.
func (s *SQLite) retireRow(id string) {
	r, ok := s.rows[id]
	if !ok {
		return
	}
	delete(s.rows, id)
	s.ids[r] = ""
	s.authors[r] = nil
	s.lex.Remove(r)
	s.retired++
}

// commitLocked finishes a change of the in-memory index: it rebuilds it
// without retired rows once they are a quarter of all rows, and recomputes
// what depends on the whole index. The caller holds s.mu for writing.
func (s *SQLite) commitLocked(ctx context.Context) error {
	if s.retired >= 1024 && s.retired >= len(s.ids)/4 {
		return s.load(ctx)
	}
	s.lex.Commit()
	return nil
}

// allow returns the filter's test of a row, excluded ids aside (those are
// dropped after ranking). The caller holds s.mu.
func (s *SQLite) allow(f papersearch.Filter) func(row int) bool {
	venues := map[string]bool{}
	for _, v := range f.Venues {
		venues[venueKey(v)] = true
	}
	author := authorWords(f.Author)
	return func(row int) bool {
		if s.ids[row] == "" {
			return false
		}
		y := int(s.years[row])
		if f.YearMin != 0 && y < f.YearMin || f.YearMax != 0 && y > f.YearMax {
			return false
		}
		if len(venues) > 0 && !venues[s.venues[row]] {
			return false
		}
		if len(author) > 0 {
			for _, name := range s.authors[row] {
				if authorMatches(name, author) {
					return true
				}
			}
			return false
		}
		return true
	}
}

// Kind returns "embedded".
func (s *SQLite) Kind() string { return "embedded" }

// Model returns the model the store's vectors come from.
func (s *SQLite) Model() embed.ModelInfo { return s.model }

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
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO papers (id, title, abstract, authors, venue, year, url, text_hash, paper_hash, vector, terms)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET title=excluded.title, abstract=excluded.abstract, authors=excluded.authors,
			venue=excluded.venue, year=excluded.year, url=excluded.url, text_hash=excluded.text_hash,
			paper_hash=excluded.paper_hash, vector=excluded.vector, terms=excluded.terms`)
	if err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	defer stmt.Close()
	terms := make([][]string, len(docs))
	for i, d := range docs {
		p := d.Paper
		authors, err := json.Marshal(nonNil(p.Authors))
		if err != nil {
			return fmt.Errorf("upsert %s: %w", p.ID, err)
		}
		terms[i] = d.analysed()
		if _, err := stmt.ExecContext(ctx, p.ID, p.Title, p.Abstract, string(authors), p.Venue, p.Year, p.URL,
			d.TextHash, d.PaperHash, embed.EncodeVector(d.Vector), strings.Join(terms[i], " ")); err != nil {
			return fmt.Errorf("upsert %s: %w", p.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("upsert: commit: %w", err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	for i, d := range docs {
		s.retireRow(d.Paper.ID)
		s.appendRow(d.Paper, d.Vector, terms[i])
	}
	return s.commitLocked(context.WithoutCancel(ctx))
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
	d.Vector = embed.DecodeVector(blob)
	return d, nil
}

// Get returns one document, with its analysed terms.
func (s *SQLite) Get(ctx context.Context, id string) (Document, error) {
	var terms string
	d, err := scanDocument(s.db.QueryRowContext(ctx, `SELECT `+documentColumns+`, terms FROM papers WHERE id = ?`, id), &terms)
	if errors.Is(err, sql.ErrNoRows) {
		return Document{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return Document{}, fmt.Errorf("get %q: %w", id, err)
	}
	d.Terms = strings.Fields(terms)
	return d, nil
}

// paperColumns are the columns of a paper alone, for reads that need no
// vector.
const paperColumns = `id, title, abstract, authors, venue, year, url`

// Lookup returns the papers of those ids that exist, reading no vectors.
func (s *SQLite) Lookup(ctx context.Context, ids []string) (map[string]papersearch.Paper, error) {
	out := make(map[string]papersearch.Paper, len(ids))
	for start := 0; start < len(ids); start += 500 {
		part := ids[start:min(start+500, len(ids))]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		rows, err := s.db.QueryContext(ctx, `SELECT `+paperColumns+` FROM papers WHERE id IN (?`+strings.Repeat(",?", len(part)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("lookup: %w", err)
		}
		for rows.Next() {
			var (
				p       papersearch.Paper
				authors string
			)
			if err := rows.Scan(&p.ID, &p.Title, &p.Abstract, &authors, &p.Venue, &p.Year, &p.URL); err != nil {
				rows.Close()
				return nil, fmt.Errorf("lookup: %w", err)
			}
			if err := json.Unmarshal([]byte(authors), &p.Authors); err != nil {
				rows.Close()
				return nil, fmt.Errorf("lookup: paper %q: authors: %w", p.ID, err)
			}
			out[p.ID] = p
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

// RescoreFactor and MinRescore size dense retrieval's second pass: the
// first pass scans every allowed paper's int8 codes and keeps the best
// max(RescoreFactor·k, MinRescore), which are then scored exactly with
// their float32 vectors. On a million random 384-d vectors this finds the
// exact top 10 with recall@10 of 1.0 (papersearch bench --synthetic).
const (
	RescoreFactor = 2
	MinRescore    = 200
	// parallelScanRows is the store size from which the first pass runs on
	// every core.
	parallelScanRows = 16384
)

// NearestTo is Nearest from the stored vector of id.
func (s *SQLite) NearestTo(ctx context.Context, id string, k int, f papersearch.Filter) ([]Candidate, error) {
	dim := s.model.Dim
	s.mu.RLock()
	r, ok := s.rows[id]
	var v []float32
	if ok {
		v = slices.Clone(s.vectors[r*dim : (r+1)*dim])
	}
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("nearest to %q: %w", id, ErrNotFound)
	}
	return s.Nearest(ctx, v, k, f)
}

// Nearest finds the k allowed vectors with the largest cosine similarity to
// v: a first pass over int8 codes (a quarter of the memory traffic of
// float32), then exact re-scoring of the best candidates.
func (s *SQLite) Nearest(ctx context.Context, v []float32, k int, f papersearch.Filter) ([]Candidate, error) {
	dim := s.model.Dim
	if len(v) != dim {
		return nil, fmt.Errorf("nearest: %w: %d, want %d", ErrDimension, len(v), dim)
	}
	qcodes := make([]int8, dim)
	qscale := embed.Quantize(qcodes, v)
	s.mu.RLock()
	defer s.mu.RUnlock()
	excluded := s.excludedRows(f.Exclude)
	keep := max(RescoreFactor*k, MinRescore) + len(excluded)
	allow := s.allow(f)
	plain := filterEmpty(withoutExclude(f))
	scan := func(from, to int, first *rowTopK) {
		for r := from; r < to; r++ {
			if r%8192 == 0 && ctx.Err() != nil {
				return
			}
			if s.ids[r] == "" || !plain && !allow(r) {
				continue
			}
			first.push(r, float32(embed.DotInt8(qcodes, s.codes[r*dim:(r+1)*dim]))*s.scales[r]*qscale)
		}
	}
	// A large store's first pass is split across the cores that other
	// queries leave idle; under load each query scans alone.
	running := int(s.inFlight.Add(1))
	defer s.inFlight.Add(-1)
	parts := 1
	if len(s.ids) >= parallelScanRows {
		parts = max(1, runtime.GOMAXPROCS(0)-running+1)
	}
	firsts := make([]*rowTopK, parts)
	var wg sync.WaitGroup
	for p := range parts {
		firsts[p] = newRowTopK(keep)
		from, to := p*len(s.ids)/parts, (p+1)*len(s.ids)/parts
		wg.Add(1)
		go func() { defer wg.Done(); scan(from, to, firsts[p]) }()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	first := firsts[0]
	for _, other := range firsts[1:] {
		for _, x := range other.items {
			first.push(x.row, x.score)
		}
	}
	top := newTopK(k)
	for _, r := range first.rows() {
		if !excluded[r] {
			top.push(Candidate{ID: s.ids[r], Score: embed.Dot(v, s.vectors[r*dim:(r+1)*dim])})
		}
	}
	return top.sorted(), nil
}

// NearestExact is Nearest by a full float32 scan, with no first pass: the
// reference that benchmarks measure Nearest's recall against.
func (s *SQLite) NearestExact(ctx context.Context, v []float32, k int) ([]Candidate, error) {
	dim := s.model.Dim
	if len(v) != dim {
		return nil, fmt.Errorf("nearest: %w: %d, want %d", ErrDimension, len(v), dim)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	top := newTopK(k)
	for r, id := range s.ids {
		if id != "" {
			top.push(Candidate{ID: id, Score: embed.Dot(v, s.vectors[r*dim:(r+1)*dim])})
		}
	}
	return top.sorted(), ctx.Err()
}

// excludedRows maps the live rows of ids. The caller holds s.mu.
func (s *SQLite) excludedRows(ids []string) map[int]bool {
	out := make(map[int]bool, len(ids))
	for _, id := range ids {
		if r, ok := s.rows[id]; ok {
			out[r] = true
		}
	}
	return out
}

// Lexical ranks the allowed papers by BM25 for the analysed query terms
// and keeps the k best.
func (s *SQLite) Lexical(ctx context.Context, terms []string, k int, f papersearch.Filter) (Matches, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	buf, _ := s.scores.Get().(*[]float32)
	if buf == nil {
		buf = new([]float32)
	}
	defer s.scores.Put(buf)
	if cap(*buf) < len(s.ids) {
		*buf = make([]float32, len(s.ids))
	}
	scores := (*buf)[:len(s.ids)]
	var allow func(int) bool
	if !filterEmpty(withoutExclude(f)) {
		allow = s.allow(f)
	}
	excluded := s.excludedRows(f.Exclude)
	touched, ideal := s.lex.Score(terms, allow, scores, nil)
	top := newTopK(k)
	for _, r := range touched {
		if !excluded[int(r)] {
			top.push(Candidate{ID: s.ids[r], Score: scores[r]})
		}
		scores[r] = 0
	}
	return Matches{Candidates: top.sorted(), Ideal: ideal}, ctx.Err()
}

// Delete removes one document.
func (s *SQLite) Delete(ctx context.Context, id string) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	res, err := s.db.ExecContext(ctx, `DELETE FROM papers WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete %q: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.retireRow(id)
	return s.commitLocked(context.WithoutCancel(ctx))
}

// RefreshLexical does nothing: the embedded store's BM25 statistics are
// updated with every change.
func (s *SQLite) RefreshLexical(context.Context) error { return nil }

// Count returns the number of documents.
func (s *SQLite) Count(context.Context) (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.rows), nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

var _ Store = (*SQLite)(nil)
