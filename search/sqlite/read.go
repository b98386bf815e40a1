package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/storage"
)

// paperColumns are the columns of a paper; documentColumns add what a
// storage.Document holds besides.
const (
	paperColumns    = `id, title, abstract, authors, venue, year, url, tags, sources, type, date, added`
	documentColumns = paperColumns + `, text_hash, paper_hash, vector`
)

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanPaper reads the paperColumns of one row, then extra destinations.
func scanPaper(row scanner, extra ...any) (papersearch.Paper, error) {
	var (
		p                      papersearch.Paper
		authors, tags, sources string
		added                  int64
	)
	dest := append([]any{&p.ID, &p.Title, &p.Abstract, &authors, &p.Venue, &p.Year, &p.URL, &tags, &sources, &p.Type, &p.Date, &added}, extra...)
	if err := row.Scan(dest...); err != nil {
		return p, err
	}
	if added != 0 {
		p.Added = time.Unix(added, 0).UTC()
	}
	if tags != "" {
		p.Tags = strings.Fields(tags)
	}
	if err := json.Unmarshal([]byte(authors), &p.Authors); err != nil {
		return p, fmt.Errorf("paper %q: authors: %w", p.ID, err)
	}
	if sources != "" {
		if err := json.Unmarshal([]byte(sources), &p.Sources); err != nil {
			return p, fmt.Errorf("paper %q: sources: %w", p.ID, err)
		}
	}
	return p, nil
}

// scanDocument reads the documentColumns of one row, then extra
// destinations.
func scanDocument(row scanner, extra ...any) (storage.Document, error) {
	var (
		d    storage.Document
		blob []byte
		err  error
	)
	d.Paper, err = scanPaper(row, append([]any{&d.TextHash, &d.PaperHash, &blob}, extra...)...)
	if err != nil {
		return storage.Document{}, err
	}
	d.Vector = embed.DecodeVector(blob)
	return d, nil
}

// Get returns one document, with its analysed terms.
func (s *Store) Get(ctx context.Context, id string) (storage.Document, error) {
	var terms string
	st, err := s.prepared(ctx, `SELECT `+documentColumns+`, terms FROM papers WHERE id = ?`)
	if err != nil {
		return storage.Document{}, fmt.Errorf("get %q: %w", id, err)
	}
	d, err := scanDocument(st.QueryRowContext(ctx, id), &terms)
	if errors.Is(err, sql.ErrNoRows) {
		return storage.Document{}, fmt.Errorf("%w: %q", storage.ErrNotFound, id)
	}
	if err != nil {
		return storage.Document{}, fmt.Errorf("get %q: %w", id, err)
	}
	d.Terms = strings.Fields(terms)
	ss, err := s.Sentences(ctx, []string{id})
	if err != nil {
		return storage.Document{}, fmt.Errorf("get %q: %w", id, err)
	}
	d.Sentences = ss[id]
	return d, nil
}

// Vectors returns the vectors of those of ids that exist, from the
// in-memory index.
func (s *Store) Vectors(ctx context.Context, ids []string) (map[string][]float32, error) {
	return s.idx.Load().vectorsOf(ids), ctx.Err()
}

// idChunk bounds the ids of one IN query (see queryIn), so that a long
// list is read a part at a time.
const idChunk = 500

// eachByID runs `SELECT columns FROM papers WHERE id IN (ids)` in chunks
// and calls scan for every row found.
func (s *Store) eachByID(ctx context.Context, columns string, ids []string, scan func(scanner) error) error {
	return s.eachIn(ctx, `SELECT `+columns+` FROM papers WHERE id`, ids, scan)
}

// eachIn runs `query IN (keys)` ("SELECT id FROM work_keys WHERE key") in
// chunks of idChunk keys and calls scan for every row found.
func (s *Store) eachIn(ctx context.Context, query string, keys []string, scan func(scanner) error) error {
	for start := 0; start < len(keys); start += idChunk {
		rows, err := s.queryIn(ctx, query, keys[start:min(start+idChunk, len(keys))])
		if err != nil {
			return err
		}
		for rows.Next() {
			if err := scan(rows); err != nil {
				rows.Close()
				return err
			}
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
	}
	return nil
}

// Lookup returns the papers of those ids that exist, reading no vectors.
func (s *Store) Lookup(ctx context.Context, ids []string) (map[string]papersearch.Paper, error) {
	out := make(map[string]papersearch.Paper, len(ids))
	err := s.eachByID(ctx, paperColumns, ids, func(row scanner) error {
		p, err := scanPaper(row)
		out[p.ID] = p
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("lookup: %w", err)
	}
	return out, nil
}

// Titles returns the title of each of ids that is stored: a row is read
// only up to its title, not through its vector's overflow pages.
func (s *Store) Titles(ctx context.Context, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	err := s.eachByID(ctx, "id, title", ids, func(row scanner) error {
		var id, title string
		err := row.Scan(&id, &title)
		out[id] = title
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("titles: %w", err)
	}
	return out, nil
}

// Works returns the papers holding any of keys among their work keys.
func (s *Store) Works(ctx context.Context, keys []string) (map[string]papersearch.Paper, error) {
	var ids []string
	err := s.eachIn(ctx, `SELECT DISTINCT id FROM work_keys WHERE key`, keys, func(row scanner) error {
		var id string
		err := row.Scan(&id)
		ids = append(ids, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("works: %w", err)
	}
	return s.Lookup(ctx, ids)
}

// Fingerprints returns the stored hashes of the ids that exist.
func (s *Store) Fingerprints(ctx context.Context, ids []string) (map[string]storage.Fingerprint, error) {
	out := make(map[string]storage.Fingerprint, len(ids))
	err := s.eachByID(ctx, `id, text_hash, paper_hash, added`, ids, func(row scanner) error {
		var id string
		var f storage.Fingerprint
		var added int64
		err := row.Scan(&id, &f.TextHash, &f.PaperHash, &added)
		if added != 0 {
			f.Added = time.Unix(added, 0).UTC()
		}
		out[id] = f
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("fingerprints: %w", err)
	}
	return out, nil
}

// Scroll pages through documents in insertion order; the cursor is the
// last row's sequence number.
func (s *Store) Scroll(ctx context.Context, cursor string, limit int) ([]storage.Document, string, error) {
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
		docs []storage.Document
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
// opening it for use. It returns storage.ErrNotFound when path has no store.
func StoredModel(ctx context.Context, path string) (embed.ModelInfo, error) {
	if _, err := os.Stat(path); err != nil {
		return embed.ModelInfo{}, fmt.Errorf("%w: no store at %s", storage.ErrNotFound, path)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return embed.ModelInfo{}, err
	}
	defer db.Close()
	m, err := readMeta(ctx, db)
	if err != nil {
		return embed.ModelInfo{}, fmt.Errorf("read the model of %s: %w", path, err)
	}
	model, ok := m.model()
	if !ok {
		return embed.ModelInfo{}, fmt.Errorf("read the model of %s: none recorded", path)
	}
	return model, nil
}
