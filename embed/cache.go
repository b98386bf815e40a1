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
	"sync/atomic"

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
	// found and asked count the entries read from the cache and those
	// asked of it (a text, whole or in parts, once per call).
	found, asked atomic.Int64
}

// Found reports how many of the entries asked of the cache it held, and
// how many were asked.
func (c *Cache) Found() (found, asked int64) { return c.found.Load(), c.asked.Load() }

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
	err := c.through(ctx, len(texts),
		func(i int) []byte { return c.key(texts[i]) },
		func(i int, blob []byte) bool { out[i] = DecodeVector(blob); return true },
		func(ctx context.Context, missing []int) ([][]byte, error) {
			todo := make([]string, len(missing))
			for j, i := range missing {
				todo[j] = texts[i]
			}
			vecs, err := c.inner.Embed(ctx, todo)
			if err != nil {
				return nil, err
			}
			blobs := make([][]byte, len(missing))
			for j, i := range missing {
				out[i], blobs[j] = vecs[j], EncodeVector(vecs[j])
			}
			return blobs, nil
		})
	return out, err
}

// EmbedParts is the inner embedder's EmbedParts (it must have one:
// AsPartEmbedder), each text's vectors, whole and parts, remembered as one
// entry under its parts' key.
func (c *Cache) EmbedParts(ctx context.Context, texts [][]string) ([][]float32, [][][]float32, error) {
	inner, ok := AsPartEmbedder(c.inner)
	if !ok {
		return nil, nil, fmt.Errorf("embed in parts with %s: %w", c.Info().Name, errors.ErrUnsupported)
	}
	wholes, parts := make([][]float32, len(texts)), make([][][]float32, len(texts))
	err := c.through(ctx, len(texts),
		func(i int) []byte { return c.key("\x00parts\x00" + strings.Join(texts[i], "\x00")) },
		func(i int, blob []byte) bool {
			vecs, ok := decodeVectors(blob)
			if !ok || len(vecs) != 1+len(texts[i]) {
				return false
			}
			wholes[i], parts[i] = vecs[0], vecs[1:]
			return true
		},
		func(ctx context.Context, missing []int) ([][]byte, error) {
			todo := make([][]string, len(missing))
			for j, i := range missing {
				todo[j] = texts[i]
			}
			w, p, err := inner.EmbedParts(ctx, todo)
			if err != nil {
				return nil, err
			}
			blobs := make([][]byte, len(missing))
			for j, i := range missing {
				wholes[i], parts[i] = w[j], p[j]
				blobs[j] = encodeVectors(append([][]float32{w[j]}, p[j]...))
			}
			return blobs, nil
		})
	return wholes, parts, err
}

// through reads the n entries named by key from the cache (found takes
// each one found, false if it cannot be read), asks embed for the rest
// and stores what it returns, all at once.
func (c *Cache) through(ctx context.Context, n int, key func(int) []byte, found func(int, []byte) bool,
	embed func(context.Context, []int) ([][]byte, error)) error {
	keys := make([][]byte, n)
	var missing []int
	for i := range n {
		keys[i] = key(i)
		var blob []byte
		err := c.db.QueryRowContext(ctx, `SELECT vector FROM vectors WHERE key = ?`, keys[i]).Scan(&blob)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			missing = append(missing, i)
		case err != nil:
			return fmt.Errorf("embedding cache: %w", err)
		case !found(i, blob):
			missing = append(missing, i)
		}
	}
	c.asked.Add(int64(n))
	c.found.Add(int64(n - len(missing)))
	if len(missing) == 0 {
		return nil
	}
	blobs, err := embed(ctx, missing)
	if err != nil {
		return err
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("embedding cache: %w", err)
	}
	defer tx.Rollback()
	for j, i := range missing {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)`, keys[i], blobs[j]); err != nil {
			return fmt.Errorf("embedding cache: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("embedding cache: %w", err)
	}
	return nil
}

// encodeVectors is several vectors, each nil or not, in one blob: each
// as its length (a little-endian uint32) and its EncodeVector form.
func encodeVectors(vecs [][]float32) []byte {
	var b []byte
	for _, v := range vecs {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
		b = append(b, EncodeVector(v)...)
	}
	return b
}

// decodeVectors reads a blob of encodeVectors; false if it is not one.
func decodeVectors(b []byte) ([][]float32, bool) {
	var out [][]float32
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, false
		}
		n := int(binary.LittleEndian.Uint32(b))
		b = b[4:]
		if n > len(b)/4 {
			return nil, false
		}
		var v []float32
		if n > 0 {
			v = DecodeVector(b[:4*n])
		}
		out = append(out, v)
		b = b[4*n:]
	}
	return out, true
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
