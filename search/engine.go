package search

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
)

// Limits on a query.
const (
	DefaultLimit = 10
	MaxLimit     = 100
	// MaxQueryBytes bounds free-text query length, in bytes.
	MaxQueryBytes = 4096
)

// ErrInvalidQuery is wrapped by errors that describe a bad query.
var ErrInvalidQuery = errors.New("invalid query")

// Engine answers free-text and similar-paper queries over a Store, embedding
// query text with the same Embedder the documents were embedded with.
type Engine struct {
	store    Store
	embedder embed.Embedder
	log      *slog.Logger
}

// NewEngine returns an Engine over store. The embedder must produce the
// vectors the store holds.
func NewEngine(store Store, embedder embed.Embedder, log *slog.Logger) (*Engine, error) {
	if got, want := embedder.Info(), store.Model(); got != want {
		return nil, fmt.Errorf("%w: the index holds %s (%d dimensions), the embedder is %s (%d dimensions)",
			ErrModelMismatch, want.Name, want.Dim, got.Name, got.Dim)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{store: store, embedder: embedder, log: log}, nil
}

// Query is a free-text search.
type Query struct {
	Text  string
	Limit int // 1..MaxLimit; 0 means DefaultLimit
}

// Hit is one ranked result.
type Hit struct {
	ID    string            `json:"id"`
	Rank  int               `json:"rank"` // 1-based
	Score float32           `json:"score"`
	Paper papersearch.Paper `json:"paper"`
}

// IndexInfo describes the index that answered a query.
type IndexInfo struct {
	Store  string `json:"store"`
	Model  string `json:"model"`
	Dim    int    `json:"dim"`
	Papers int    `json:"papers"`
}

// Results is a ranked page of hits.
type Results struct {
	Hits  []Hit
	Index IndexInfo
	Took  time.Duration
}

// Index describes the index the engine serves.
func (e *Engine) Index(ctx context.Context) (IndexInfo, error) {
	n, err := e.store.Count(ctx)
	if err != nil {
		return IndexInfo{}, err
	}
	m := e.store.Model()
	return IndexInfo{Store: e.store.Kind(), Model: m.Name, Dim: m.Dim, Papers: n}, nil
}

// ValidateQuery checks a free-text query and a limit, returning an error
// wrapping ErrInvalidQuery that names the field at fault.
func ValidateQuery(text string, limit int) error {
	switch {
	case !utf8.ValidString(text):
		return &FieldError{Field: "query", Reason: "must be valid UTF-8"}
	case strings.TrimSpace(text) == "":
		return &FieldError{Field: "query", Reason: "must not be empty"}
	case len(text) > MaxQueryBytes:
		return &FieldError{Field: "query", Reason: fmt.Sprintf("must be at most %d bytes", MaxQueryBytes)}
	}
	return ValidateLimit(limit)
}

// ValidateLimit checks a result limit; 0 stands for DefaultLimit.
func ValidateLimit(limit int) error {
	if limit < 0 || limit > MaxLimit {
		return &FieldError{Field: "limit", Reason: fmt.Sprintf("must be between 1 and %d", MaxLimit)}
	}
	return nil
}

// FieldError is an invalid query field. It wraps ErrInvalidQuery.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return e.Field + " " + e.Reason }
func (e *FieldError) Unwrap() error { return ErrInvalidQuery }

// Search embeds the query text and returns the papers closest to it.
func (e *Engine) Search(ctx context.Context, q Query) (Results, error) {
	start := time.Now()
	if err := ValidateQuery(q.Text, q.Limit); err != nil {
		return Results{}, err
	}
	vecs, err := e.embedder.Embed(ctx, []string{q.Text})
	if err != nil {
		return Results{}, fmt.Errorf("embed query: %w", err)
	}
	return e.rank(ctx, start, vecs[0], limitOrDefault(q.Limit))
}

// Similar returns the papers closest to the paper with the given id, never
// the paper itself. An unknown id is ErrNotFound.
func (e *Engine) Similar(ctx context.Context, id string, limit int) (Results, error) {
	start := time.Now()
	if err := ValidateLimit(limit); err != nil {
		return Results{}, err
	}
	doc, err := e.store.Get(ctx, id)
	if err != nil {
		return Results{}, err
	}
	return e.rank(ctx, start, doc.Vector, limitOrDefault(limit), id)
}

// Get returns one paper, or ErrNotFound.
func (e *Engine) Get(ctx context.Context, id string) (papersearch.Paper, error) {
	doc, err := e.store.Get(ctx, id)
	if err != nil {
		return papersearch.Paper{}, err
	}
	return doc.Paper, nil
}

func (e *Engine) rank(ctx context.Context, start time.Time, v []float32, limit int, exclude ...string) (Results, error) {
	cands, err := e.store.Nearest(ctx, v, limit, exclude...)
	if err != nil {
		return Results{}, fmt.Errorf("retrieve: %w", err)
	}
	hits := make([]Hit, 0, len(cands))
	for _, c := range cands {
		doc, err := e.store.Get(ctx, c.ID)
		if errors.Is(err, ErrNotFound) {
			continue // deleted since retrieval
		}
		if err != nil {
			return Results{}, fmt.Errorf("fetch hit: %w", err)
		}
		hits = append(hits, Hit{ID: c.ID, Rank: len(hits) + 1, Score: c.Score, Paper: doc.Paper})
	}
	info, err := e.Index(ctx)
	if err != nil {
		return Results{}, err
	}
	return Results{Hits: hits, Index: info, Took: time.Since(start)}, nil
}

func limitOrDefault(limit int) int {
	if limit == 0 {
		return DefaultLimit
	}
	return limit
}
