// Package sqlite is the embedded storage.Store: one SQLite database file
// holding papers, vectors, analysed terms and the index metadata, served
// from an in-memory index loaded from it.
package sqlite

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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/storage"

	_ "modernc.org/sqlite" // pure-Go SQLite driver, registered as "sqlite"
)

// Store is the embedded storage.Store. The file is the record; retrieval
// runs on an in-memory index loaded from it and kept in step with every
// change. Once retired rows (replaced or deleted papers) are a quarter of
// the index, a fresh index is loaded from the file and swapped in, while
// readers go on with the old one.
type Store struct {
	db    *sql.DB
	model embed.ModelInfo
	// split is where the index keeps its codes apart (see ScanPrefix).
	split atomic.Int64

	// writeMu serialises changes, so the index applies them in the order
	// they were committed to the file; it is held for the whole of a
	// change, from the transaction to the index's update.
	writeMu sync.Mutex
	idx     atomic.Pointer[index]
	// applied is the newest seq of the changes log the index reflects,
	// and own the spans after it that this Store wrote itself (see
	// follow.go); both guarded by writeMu.
	applied int64
	own     []ownChanges
	// closed is closed by Close, ending Follow.
	closed    chan struct{}
	closeOnce sync.Once
	stmts     statements
	// decoded holds the buffers VisitSentences decodes sentences into
	// (*sentenceBuf), reused across requests.
	decoded sync.Pool
}

// Open opens or creates the store at path for vectors of model. A store
// built with another model or dimension is refused with an error wrapping
// storage.ErrModelMismatch.
func Open(ctx context.Context, path string, model embed.ModelInfo) (*Store, error) {
	if model.Name == "" || model.Dim <= 0 {
		return nil, fmt.Errorf("open store: invalid model %+v", model)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=mmap_size(0)&_pragma=cache_size(-" + strconv.Itoa(cacheKiB) + ")"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	db.SetMaxIdleConns(idleConns)
	db.SetConnMaxIdleTime(idleConnLife)
	s := &Store{db: db, model: model, closed: make(chan struct{})}
	if err := s.init(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

// ScanPrefix tells the store that most dense queries are zero past
// their first dim dimensions (the model gate's core, storage.PrefixScanner):
// the index keeps those dimensions' codes in a matrix of their own, so
// that such a query's first pass reads one contiguous matrix, not every
// row's whole codes (about twice as fast over 29,100 papers of three
// models, whose core is two). The answers are the same.
func (s *Store) ScanPrefix(dim int) {
	s.writeMu.Lock() // no index is swapped in meanwhile
	defer s.writeMu.Unlock()
	s.split.Store(int64(dim))
	x := s.idx.Load()
	x.mu.Lock()
	defer x.mu.Unlock()
	x.resplit(dim)
}

// load reads every paper's vector, terms and filter fields into a new
// index. The index is sized from a count first and each vector is decoded
// in place, so a large store's opening peaks near its live size instead of
// twice it (slice doubling and a garbage vector per row).
func (s *Store) load(ctx context.Context) (*index, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM papers`).Scan(&n); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	x := newIndex(s.model.Dim, int(s.split.Load()), n)
	// Title and abstract are read only for rows whose terms were never
	// stored (stores written before terms were), to analyse them once.
	rows, err := s.db.QueryContext(ctx, `SELECT id,
		CASE WHEN terms = '' THEN title ELSE '' END, CASE WHEN terms = '' THEN abstract ELSE '' END,
		authors, venue, year, '', tags, '', '', date, added, terms, vector FROM papers ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	defer rows.Close()
	type missing struct{ id, terms string }
	var fill []missing
	for loaded := 1; rows.Next(); loaded++ {
		// Each row leaves a little garbage (the driver's strings, the
		// terms' split); the collector, paced to the index reserved above,
		// would let it pile up to its size. Collecting every
		// loadCollectEvery rows keeps the peak near the live size.
		if loaded%loadCollectEvery == 0 {
			runtime.GC()
		}
		var (
			terms string
			blob  sql.RawBytes
		)
		p, err := scanPaper(rows, &terms, &blob)
		if err != nil {
			return nil, fmt.Errorf("load: %w", err)
		}
		if len(blob) != 4*s.model.Dim {
			return nil, fmt.Errorf("load: paper %s: %w: %d bytes, want %d", p.ID, storage.ErrDimension, len(blob), 4*s.model.Dim)
		}
		if terms == "" {
			terms = strings.Join(lexical.Analyze(p.Text()), " ")
			fill = append(fill, missing{p.ID, terms})
		}
		vec := x.nextVector()
		for i := range vec {
			vec[i] = math.Float32frombits(binary.LittleEndian.Uint32(blob[4*i:]))
		}
		x.append(p, vec, strings.Fields(terms))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	rows.Close()
	for _, m := range fill {
		if _, err := s.db.ExecContext(ctx, `UPDATE papers SET terms = ? WHERE id = ?`, m.terms, m.id); err != nil {
			return nil, fmt.Errorf("load: store terms of %s: %w", m.id, err)
		}
	}
	x.lex.Commit()
	return x, nil
}

// loadCollectEvery is how many rows load reads between garbage
// collections: about 100 MB of vectors at 384 dimensions.
const loadCollectEvery = 65536

// compact loads a fresh index, without retired rows, and swaps it in. The
// caller holds s.writeMu, so no change is lost between load and swap. A
// failed load leaves the current index serving: it is correct, only larger.
func (s *Store) compact(ctx context.Context) error {
	if err := s.reload(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("compact the index: %w", err)
	}
	return nil
}

// Kind returns "embedded".
func (s *Store) Kind() string { return "embedded" }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Model returns the model the store's vectors come from.
func (s *Store) Model() embed.ModelInfo { return s.model }

// Close ends Follow and closes the database.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	return errors.Join(s.closeStatements(), s.db.Close())
}

// Upsert writes docs in one transaction, then updates the index.
func (s *Store) Upsert(ctx context.Context, docs []storage.Document) error {
	if len(docs) == 0 {
		return nil
	}
	if err := storage.CheckDimensions(docs, s.model.Dim); err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO papers (id, title, abstract, authors, venue, year, url, tags, sources, type, date, added,
			text_hash, paper_hash, vector, terms)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET title=excluded.title, abstract=excluded.abstract, authors=excluded.authors,
			venue=excluded.venue, year=excluded.year, url=excluded.url, tags=excluded.tags, sources=excluded.sources, type=excluded.type,
			date=excluded.date, added=excluded.added,
			text_hash=excluded.text_hash, paper_hash=excluded.paper_hash, vector=excluded.vector, terms=excluded.terms`)
	if err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	defer stmt.Close()
	entries := make([]entry, len(docs))
	added := s.idx.Load().addedTimes(docs)
	for i, d := range docs {
		p := d.Paper
		p.Added = added[i]
		authors, err := json.Marshal(nonNil(p.Authors))
		if err != nil {
			return fmt.Errorf("upsert %s: %w", p.ID, err)
		}
		var sources []byte
		if len(p.Sources) > 0 {
			if sources, err = json.Marshal(p.Sources); err != nil {
				return fmt.Errorf("upsert %s: %w", p.ID, err)
			}
		}
		entries[i] = entry{paper: p, vector: d.Vector, terms: d.AnalysedTerms()}
		if _, err := stmt.ExecContext(ctx, p.ID, p.Title, p.Abstract, string(authors), p.Venue, p.Year, p.URL, strings.Join(p.Tags, " "),
			string(sources), p.Type, p.Date, p.Added.Unix(), d.TextHash, d.PaperHash, embed.EncodeVector(d.Vector), strings.Join(entries[i].terms, " ")); err != nil {
			return fmt.Errorf("upsert %s: %w", p.ID, err)
		}
		if err := putWorkKeys(ctx, tx, p); err != nil {
			return fmt.Errorf("upsert: %w", err)
		}
		// nil sentences: the text did not change, and neither did they.
		if d.Sentences != nil {
			if err := s.putSentences(ctx, tx, p.ID, d.Sentences); err != nil {
				return fmt.Errorf("upsert: %w", err)
			}
		}
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.Paper.ID
	}
	span, err := logChanges(ctx, tx, ids)
	if err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("upsert: commit: %w", err)
	}
	if s.idx.Load().put(entries) {
		return s.compact(ctx)
	}
	s.committed(span)
	return nil
}

// Delete removes one document.
func (s *Store) Delete(ctx context.Context, id string) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("delete %q: %w", id, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM papers WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete %q: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w: %q", storage.ErrNotFound, id)
	}
	for _, table := range []string{"work_keys", "sentences"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete %q: %w", id, err)
		}
	}
	span, err := logChanges(ctx, tx, []string{id})
	if err != nil {
		return fmt.Errorf("delete %q: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("delete %q: commit: %w", id, err)
	}
	if s.idx.Load().remove(id) {
		return s.compact(ctx)
	}
	s.committed(span)
	return nil
}

// Nearest returns the k allowed papers with the largest cosine similarity
// to v (see index.nearest).
func (s *Store) Nearest(ctx context.Context, v []float32, k int, f papersearch.Filter) ([]storage.Candidate, error) {
	return s.idx.Load().nearest(ctx, v, k, f)
}

// NearestMany answers several Nearest queries in one pass over the index
// (storage.ManyNearest).
func (s *Store) NearestMany(ctx context.Context, vs [][]float32, ks []int, f papersearch.Filter) ([][]storage.Candidate, error) {
	return s.idx.Load().nearestMany(ctx, vs, ks, f)
}

// Lexical ranks the allowed papers by BM25 for the analysed query terms
// and keeps the k best.
func (s *Store) Lexical(ctx context.Context, terms []string, k int, f papersearch.Filter) (storage.Matches, error) {
	return s.idx.Load().lexical(ctx, terms, k, f)
}

// RefreshLexical does nothing: the embedded store's BM25 statistics are
// updated with every change.
func (s *Store) RefreshLexical(context.Context) error { return nil }

// Tags counts the papers holding each tag.
func (s *Store) Tags(context.Context) (map[string]int, error) { return s.idx.Load().tagCounts(), nil }

// Count returns the number of documents.
func (s *Store) Count(context.Context) (int, error) { return s.idx.Load().count(), nil }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

var _ storage.Store = (*Store)(nil)
