package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/catalog/imports"
	"github.com/papersearch/papersearch/search/storage"
	"github.com/papersearch/papersearch/seeds"
)

// tagFlags collects repeated --tag flags.
type tagFlags []string

func (t *tagFlags) String() string     { return strings.Join(*t, ",") }
func (t *tagFlags) Set(v string) error { *t = append(*t, v); return nil }

// importCmd brings the papers of a source into the store, tagged, batch by
// batch, and prints what it did and which records it rejected.
func importCmd(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"import needs a source: " + imports.Usage()}
	}
	kind := args[0]
	var tags, categories tagFlags
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.Var(&tags, "tag", "tag every imported paper (repeat for several)")
	fs.Var(&categories, "category", "arxiv-snapshot: keep records with a category starting with this (repeat for several)")
	limit := fs.Int("max", 1000, "arxiv, openalex: import at most this many papers")
	restart := fs.Bool("restart", false, strings.Join(imports.NetworkSources(), ", ")+": read the source from its start, not after what an interrupted run stored")
	positional, err := parseInterleaved(fs, "import", args[1:], stdout)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return usageError{fmt.Sprintf("import %s needs exactly one argument; sources: %s", kind, imports.Usage())}
	}
	if len(categories) > 0 && kind != "arxiv-snapshot" {
		return usageError{"import: --category is for arxiv-snapshot"}
	}
	name := positional[0]
	if *limit < 1 {
		return usageError{"import: --max must be at least 1"}
	}
	var (
		file io.Reader
		head []byte // the file's first bytes, to say what it is if it holds no record
		view *progressView
	)
	isFile, known := imports.IsFile(kind)
	if !known {
		return usageError{fmt.Sprintf("import: unknown source %q; sources: %s", kind, imports.Usage())}
	}
	if isFile {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		var r io.Reader
		r, view = fileProgress(stderr, name, f, cfg.ProgressEvery)
		if file, err = seeds.Decompressed(r); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		b := bufio.NewReader(file)
		head, _ = b.Peek(4096)
		file = b
	}
	opened, err := importConfig(cfg, log).Open(ctx, imports.Request{Kind: kind, Target: name, File: file,
		Categories: categories, Max: *limit, Tags: tags, Restart: *restart})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if at := opened.ResumedAt; at != "" {
		fmt.Fprintf(stderr, "%s: resuming after record %s, where an interrupted run stopped (--restart reads from the start)\n",
			name, strings.Fields(at)[0])
	}
	embedder, batch, cache, err := cachedEmbedder(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer cache.close()
	defer cache.report(stderr)
	svc, err := engineWith(ctx, cfg, log, embedder, batch)
	if err != nil {
		return err
	}
	defer svc.store.Close()
	fmt.Fprintf(stderr, "%s: importing (%s) with tags %v\n", name, kind, opened.Tags)
	if view == nil {
		// A network source: one --max bounds holds at most that many
		// records; OpenReview's as many as the venue has.
		var total func(int) int
		if imports.Bounded(kind) {
			total = func(int) int { return *limit }
		}
		view = newProgressView(stderr, name, cfg.ProgressEvery, total)
	}
	sum, err := svc.cat.Import(ctx, opened.Source, catalog.ImportOptions{Tags: opened.Tags, Progress: view.report})
	view.finish()
	reportRejections(stderr, name, sum)
	if reportInterrupted(ctx, stderr, name, sum, err) {
		return err
	}
	if err != nil && sum.Read == 0 && opened.ResumedAt == "" && len(bytes.TrimSpace(head)) > 0 {
		return fmt.Errorf("%s: %w; %s", name, err, likelyFormat(head))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if sum.Read == 0 && opened.ResumedAt == "" && len(bytes.TrimSpace(head)) > 0 {
		return fmt.Errorf("%s: no %s record in a file that is not empty; %s", name, kind, likelyFormat(head))
	}
	fmt.Fprintf(stdout, "%s: %s\n", name, importSummary(sum))
	return nil
}

// importConfig is where the network sources are and where imports keep
// their checkpoints, for the store cfg names.
func importConfig(cfg Config, log *slog.Logger) imports.Config {
	store := "embedded " + cfg.storePath()
	if cfg.QdrantURL != "" {
		store = "qdrant " + cfg.QdrantURL + " " + cfg.Collection
	}
	return imports.Config{DataDir: cfg.DataDir, Store: store, ArxivURL: cfg.ArxivURL, OpenAlexURL: cfg.OpenAlexURL,
		OpenReviewURL: cfg.OpenReviewURL, OpenAlexEmail: cfg.OpenAlexEmail, Log: log}
}

// openWatches opens the watches of the configured store, to be run with
// run and open: on the embedded store, its file's watches table (the data
// folder's watches.db of an earlier version moved in once); on Qdrant,
// records of its own (store), which every instance on it shares.
func openWatches(ctx context.Context, cfg Config, store storage.Store, run imports.Runner, open imports.Opener, log *slog.Logger) (*imports.Watches, error) {
	if cfg.QdrantURL != "" {
		records, ok := store.(storage.Records)
		if !ok {
			return nil, fmt.Errorf("watches: the %s store keeps no records", store.Kind())
		}
		return imports.WatchesIn(records, run, open, log), nil
	}
	if old := filepath.Join(cfg.DataDir, "watches.db"); old != cfg.storePath() {
		n, err := imports.CopyWatches(ctx, old, cfg.storePath())
		if err != nil {
			return nil, err
		}
		if err := os.Rename(old, old+".migrated"); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if n > 0 {
			log.Info("moved the data folder's watches into the store", "watches", n)
		}
	}
	return imports.OpenWatches(ctx, cfg.storePath(), run, open, log)
}

// likelyFormat says what a file whose first bytes are head looks like, and
// which command reads it.
func likelyFormat(head []byte) string {
	head = bytes.TrimSpace(head)
	switch {
	case bytes.HasPrefix(head, []byte("%PDF")):
		return "it is a PDF: papersearch reads papers' metadata and abstracts (BibTeX, CSL-JSON, JSON lines, seed text), not their PDFs"
	case !utf8.Valid(wholeRunes(head)) || bytes.IndexByte(head, 0) >= 0:
		return "it is not text (an image, an archive, a document?): papersearch reads BibTeX, CSL-JSON, JSON lines and seed text"
	case head[0] == '@':
		return "it looks like BibTeX: import bibtex FILE"
	case head[0] == '[':
		return "it looks like a JSON array, as CSL-JSON is: import csl FILE"
	case head[0] == '{' && bytes.Contains(head, []byte(`"categories"`)):
		return "it looks like arXiv's metadata snapshot (JSON lines): import arxiv-snapshot FILE"
	case head[0] == '{':
		return "it looks like JSON lines: papersearch ingest FILE reads one paper a line"
	}
	return "it looks like plain text: papersearch ingest FILE reads the seed text format"
}

// wholeRunes is b without the character its end cuts short, if it cuts
// one (a file's first bytes end anywhere).
func wholeRunes(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}
