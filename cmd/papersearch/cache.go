package main

import (
	"context"
	"log/slog"

	"github.com/papersearch/papersearch/embed"
)

// cachedEmbedder is newEmbedder's embedder wrapped in the embedding cache
// (PAPERSEARCH_EMBED_CACHE), for the commands that embed a corpus (ingest,
// import, reindex, eval): a text a model embedded before, in any of them, costs no
// encoder time. It returns the cache's path ("" when it is off) and what
// closes it, to call once the embedder is no longer used.
func cachedEmbedder(ctx context.Context, cfg Config, log *slog.Logger) (_ embed.Embedder, batch int, path string, closeCache func(), _ error) {
	inner, batch, err := newEmbedder(ctx, cfg, log)
	if err != nil {
		return nil, 0, "", nil, err
	}
	switch path = cfg.EmbedCache; path {
	case "off":
		return inner, batch, "", func() {}, nil
	case "":
		if path, err = embed.DefaultCachePath(); err != nil {
			return nil, 0, "", nil, err
		}
	}
	e, closeCache, err := cached(inner, path)
	if err != nil {
		return nil, 0, "", nil, err
	}
	return e, batch, path, closeCache, nil
}

// cached wraps e with the embedding cache at path: a Pair part by part, so
// each model's vectors are cached under its own name and with its own
// instructions.
func cached(e embed.Embedder, path string) (embed.Embedder, func(), error) {
	if p, ok := e.(*embed.Pair); ok {
		var parts []embed.Embedder
		var closers []func()
		closeAll := func() {
			for _, c := range closers {
				c()
			}
		}
		for _, m := range p.Parts() {
			c, closeC, err := cached(m, path)
			if err != nil {
				closeAll()
				return nil, nil, err
			}
			parts, closers = append(parts, c), append(closers, closeC)
		}
		return embed.NewPair(parts...), closeAll, nil
	}
	c, err := embed.NewCache(e, path)
	if err != nil {
		return nil, nil, err
	}
	return c, func() { c.Close() }, nil
}
