package embed

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	_ "modernc.org/sqlite" // pure-Go SQLite driver
)

// Cache is an Embedder that remembers every vector it has produced in a
// SQLite file, keyed by the SHA-256 of the text together with the model and
// dimension, so the same text is never embedded twice by the same model.
// It is safe for concurrent use.
type Cache struct {
	inner Embedder
	db    *sql.DB
	// arith names the inner local models' arithmetic when it is not
	// float32 (Choice.cacheKey), so vectors of another arithmetic are never
	// read as theirs. It is empty for float32, as every key was before
	// arithmetics were told apart: a cache written then on a CPU that ran
	// bfloat16 holds bf16 vectors under float32's keys (cosine to float32's
	// above 0.9999).
	arith string
}

// NewCache wraps inner with a cache stored at path (created if missing).
func NewCache(inner Embedder, path string) (*Cache, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("embedding cache: %w", err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return nil, fmt.Errorf("embedding cache %s: %w", path, err)
	}
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID`); err != nil {
		db.Close()
		return nil, fmt.Errorf("embedding cache %s: %w", path, err)
	}
	var ariths []string
	choices := Choices(inner)
	for _, name := range slices.Sorted(maps.Keys(choices)) {
		if k := choices[name].cacheKey(); k != "" {
			ariths = append(ariths, name+"="+k)
		}
	}
	return &Cache{inner: inner, db: db, arith: strings.Join(ariths, ",")}, nil
}

// Info is the wrapped embedder's.
func (c *Cache) Info() ModelInfo { return c.inner.Info() }

// CountTokens is the wrapped embedder's count.
func (c *Cache) CountTokens(texts []string) int { return CountTokens(c.inner, texts) }

// Close closes the cache file.
func (c *Cache) Close() error { return c.db.Close() }

func (c *Cache) key(text string) []byte {
	info := c.inner.Info()
	h := sha256.New()
	h.Write([]byte(info.Name + "\x00" + strconv.Itoa(info.Dim) + "\x00"))
	if c.arith != "" {
		h.Write([]byte(c.arith + "\x00"))
	}
	h.Write([]byte(text))
	return h.Sum(nil)
}

// Embed returns cached vectors and embeds only the texts not seen before.
func (c *Cache) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, ErrEmptyInput
	}
	out := make([][]float32, len(texts))
	keys := make([][]byte, len(texts))
	var missing []int
	for i, t := range texts {
		keys[i] = c.key(t)
		var blob []byte
		err := c.db.QueryRowContext(ctx, `SELECT vector FROM vectors WHERE key = ?`, keys[i]).Scan(&blob)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			missing = append(missing, i)
		case err != nil:
			return nil, fmt.Errorf("embedding cache: %w", err)
		default:
			out[i] = DecodeVector(blob)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	todo := make([]string, len(missing))
	for j, i := range missing {
		todo[j] = texts[i]
	}
	vecs, err := c.inner.Embed(ctx, todo)
	if err != nil {
		return nil, err
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("embedding cache: %w", err)
	}
	defer tx.Rollback()
	for j, i := range missing {
		out[i] = vecs[j]
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)`, keys[i], EncodeVector(vecs[j])); err != nil {
			return nil, fmt.Errorf("embedding cache: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("embedding cache: %w", err)
	}
	return out, nil
}

// DefaultCachePath is where eval keeps its embedding cache: the
// papersearch folder of the user's cache directory.
func DefaultCachePath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "papersearch", "embeddings.db"), nil
}

// DefaultChoicePath is where the in-process models record the arithmetic
// measured on this machine (LocalOptions.ChoiceFile), beside the default
// embedding cache.
func DefaultChoicePath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "papersearch", "encoder-choice.json"), nil
}

// EncodeVector is the byte form of a vector everywhere papersearch stores or
// sends one in binary: each float32 in little-endian order.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// DecodeVector reads a vector written by EncodeVector; a trailing partial
// value is ignored.
func DecodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
