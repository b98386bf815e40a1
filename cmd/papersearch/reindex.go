package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/catalog/imports"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/sqlite"
)

// reindex re-embeds every paper of the embedded store under the configured
// model into a new store file, then swaps it in, keeping the old file as
// papersearch.db.<old model>.bak. Under the model the store already has,
// it embeds again, in place, only the papers stored without sentence
// vectors (before stores kept them, or since an upgrade dropped them).
func reindex(ctx context.Context, cfg Config, log *slog.Logger, stdout, stderr io.Writer) error {
	if cfg.QdrantURL != "" {
		return errors.New("reindex rebuilds the embedded store; with Qdrant, set PAPERSEARCH_COLLECTION to a new collection and run 'papersearch ingest' on your corpus")
	}
	path := cfg.storePath()
	old, err := sqlite.StoredModel(ctx, path)
	if err != nil {
		return err
	}
	embedder, batch, cache, err := cachedEmbedder(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer cache.close()
	defer cache.report(stderr)
	info := embedder.Info()
	inPlace := old == info
	dstPath := path
	if !inPlace {
		dstPath = path + ".reindex"
		if err := removeStore(dstPath); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "reindexing %s from %s (%d dimensions) to %s (%d dimensions)\n", path, old.Name, old.Dim, info.Name, info.Dim)
	}
	sum, err := reindexer{embedder: embedder, batch: batch, log: log, stderr: stderr}.rebuild(ctx, storeFile{path, old}, dstPath)
	switch {
	case err != nil && inPlace:
		return fmt.Errorf("reindex stopped; the papers done so far keep their new sentence vectors: %w", err)
	case err != nil:
		return fmt.Errorf("reindex stopped; %s is unchanged: %w", path, err)
	case inPlace && sum.Embedded == 0:
		fmt.Fprintf(stdout, "the index at %s already uses %s (%d dimensions) and every paper has its sentence vectors; nothing to do\n", path, info.Name, info.Dim)
		return nil
	case inPlace:
		fmt.Fprintf(stdout, "the index at %s already uses %s; embedded %d papers again for their sentence vectors in %s (%d unchanged)\n",
			path, info.Name, sum.Embedded, sum.Took.Round(time.Millisecond), sum.Unchanged)
		return nil
	}
	backup := path + "." + strings.Map(safeRune, old.Name) + ".bak"
	if err := os.Rename(path, backup); err != nil {
		return err
	}
	if err := os.Rename(dstPath, path); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "reindexed %d papers under %s in %s; the old index is kept as %s\n",
		sum.New, info.Name, sum.Took.Round(time.Millisecond), backup)
	return nil
}

// storeFile is an embedded store's file and the model of its vectors.
type storeFile struct {
	path  string
	model embed.ModelInfo
}

// reindexer embeds papers with embedder, batch at a time, logging to log
// and telling progress on stderr.
type reindexer struct {
	embedder embed.Embedder
	batch    int
	log      *slog.Logger
	stderr   io.Writer
}

// rebuild embeds every paper of the store in from with r's embedder into
// the store at dstPath (of the embedder's model). The two may be one
// store: then only the papers stored without sentence vectors are
// embedded again, in place. Both are closed when it returns.
func (r reindexer) rebuild(ctx context.Context, from storeFile, dstPath string) (papersearch.IngestSummary, error) {
	srcPath, embedder, log := from.path, r.embedder, r.log
	src, err := sqlite.Open(ctx, srcPath, from.model)
	if err != nil {
		return papersearch.IngestSummary{}, err
	}
	defer src.Close()
	dst, what := src, "papers of this page embedded again for their sentence vectors"
	if dstPath != srcPath {
		if dst, err = sqlite.Open(ctx, dstPath, embedder.Info()); err != nil {
			return papersearch.IngestSummary{}, err
		}
		defer dst.Close()
		what = "papers of this page embedded"
	}
	eng, err := search.NewEngine(dst, embedder, search.Options{Logger: log})
	if err != nil {
		return papersearch.IngestSummary{}, err
	}
	sum, err := catalog.New(eng, catalog.Options{Logger: log, Batch: r.batch}).Rebuild(ctx, src, func(p catalog.IngestProgress) {
		fmt.Fprintf(r.stderr, "reindex: %d/%d %s (%.1f/s)\n", p.Done, p.Total, what, float64(p.Done)/p.Elapsed.Seconds())
	})
	if err != nil {
		return sum, err
	}
	if dst != src {
		// The new store takes over the old one's state: alerts, keys and
		// watches.
		if _, err := dst.CopyRecords(ctx, src); err != nil {
			return sum, err
		}
		if _, err := imports.CopyWatches(ctx, srcPath, dstPath); err != nil {
			return sum, err
		}
		err = errors.Join(src.Close(), dst.Close())
	}
	return sum, err
}

// removeStore deletes a store file and its SQLite side files, if present.
func removeStore(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

func safeRune(r rune) rune {
	if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_' {
		return r
	}
	return '_'
}
