package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/papersearch/papersearch/embed"
)

// embedCache is the embedding cache (PAPERSEARCH_EMBED_CACHE) a command
// that embeds a corpus (ingest, import, reindex, eval) reads and fills: a
// text a model embedded before, in any of them, costs no encoder time.
type embedCache struct {
	path   string         // "" when the cache is off
	caches []*embed.Cache // one per model
}

// cachedEmbedder is newEmbedder's embedder wrapped in the embedding cache,
// and the cache, to close once the embedder is no longer used.
func cachedEmbedder(ctx context.Context, cfg Config, log *slog.Logger) (embed.Embedder, int, *embedCache, error) {
	inner, batch, err := newEmbedder(ctx, cfg, log)
	if err != nil {
		return nil, 0, nil, err
	}
	c := &embedCache{path: cfg.EmbedCache}
	switch c.path {
	case "off":
		return inner, batch, &embedCache{}, nil
	case "":
		if c.path, err = embed.DefaultCachePath(); err != nil {
			return nil, 0, nil, err
		}
	}
	e, err := c.wrap(inner)
	if err != nil {
		c.close()
		return nil, 0, nil, err
	}
	return e, batch, c, nil
}

// wrap wraps e with the cache: a Pair part by part, so each model's
// vectors are cached under its own name and with its own instructions.
func (c *embedCache) wrap(e embed.Embedder) (embed.Embedder, error) {
	if p, ok := e.(*embed.Pair); ok {
		var parts []embed.Embedder
		for _, m := range p.Parts() {
			w, err := c.wrap(m)
			if err != nil {
				return nil, err
			}
			parts = append(parts, w)
		}
		return embed.NewPair(parts...), nil
	}
	cache, err := embed.NewCache(e, c.path)
	if err != nil {
		return nil, err
	}
	c.caches = append(c.caches, cache)
	return cache, nil
}

// close closes the cache's files.
func (c *embedCache) close() {
	for _, cache := range c.caches {
		cache.Close()
	}
}

// report writes to w how many of the vectors asked for the cache held,
// when it was asked any.
func (c *embedCache) report(w io.Writer) {
	var found, asked int64
	for _, cache := range c.caches {
		f, a := cache.Found()
		found, asked = found+f, asked+a
	}
	if asked > 0 {
		fmt.Fprintf(w, "embedding cache %s: %d of the %d texts asked of it (once per model) found, %d encoded\n", c.path, found, asked, asked-found)
	}
}
