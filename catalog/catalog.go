package catalog

import (
	"context"
	"log/slog"

	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/embedding"
	"github.com/papersearch/papersearch/search/storage"
)

// Catalog writes papers into the store an engine answers from.
type Catalog struct {
	engine *search.Engine
	// store is the engine's store as the engine observes it (search.Engine.Store),
	// so writes are measured and the map learns of them.
	store storage.Store
	// embedding embeds papers as the engine compares them with queries
	// (search.Engine.Embedding).
	embedding *embedding.Models
	log       *slog.Logger
	batch     int // papers embedded and stored together (Options.Batch)
}

// Options tune a Catalog. The zero value is a working default.
type Options struct {
	Logger *slog.Logger
	// Batch is how many papers are embedded and stored together (default
	// IngestBatch).
	Batch int
}

// New returns a Catalog writing into the store e answers from, embedding
// papers as e compares them with queries (search.Engine.Embedding).
func New(e *search.Engine, opts Options) *Catalog {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Batch <= 0 {
		opts.Batch = IngestBatch
	}
	return &Catalog{engine: e, store: e.Store(), embedding: e.Embedding(), log: opts.Logger, batch: opts.Batch}
}

// Delete removes one paper, or returns an error wrapping
// storage.ErrNotFound.
func (c *Catalog) Delete(ctx context.Context, id string) error { return c.store.Delete(ctx, id) }
