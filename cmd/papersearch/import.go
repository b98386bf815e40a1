package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/papersearch/papersearch/api"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/seeds"
	"github.com/papersearch/papersearch/seeds/arxiv"
	"github.com/papersearch/papersearch/seeds/bibtex"
	"github.com/papersearch/papersearch/seeds/csl"
	"github.com/papersearch/papersearch/seeds/fetch"
	"github.com/papersearch/papersearch/seeds/openalex"
	"github.com/papersearch/papersearch/seeds/openreview"
)

// importSources are the sources `papersearch import` reads, with what
// each takes.
const importSources = `bibtex FILE (a .bib export), csl FILE (CSL-JSON, Zotero's native export), arxiv-snapshot FILE [--category C]... (arXiv's metadata snapshot; files may be .gz), arxiv QUERY [--max N] (arXiv's API, e.g. 'cat:cs.LG AND ti:diffusion'), openalex FILTER [--max N] (e.g. 'concepts.id:C154945302,publication_year:2026') or openreview VENUE_ID (e.g. NeurIPS.cc/2026/Conference)`

// tagFlags collects repeated --tag flags.
type tagFlags []string

func (t *tagFlags) String() string     { return strings.Join(*t, ",") }
func (t *tagFlags) Set(v string) error { *t = append(*t, v); return nil }

// importCmd brings the papers of a source into the store, tagged, batch by
// batch, and prints what it did and which records it rejected.
func importCmd(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"import needs a source: " + importSources}
	}
	kind := args[0]
	var tags, categories tagFlags
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.Var(&tags, "tag", "tag every imported paper (repeat for several)")
	fs.Var(&categories, "category", "arxiv-snapshot: keep records with a category starting with this (repeat for several)")
	limit := fs.Int("max", 1000, "arxiv, openalex: import at most this many papers")
	restart := fs.Bool("restart", false, "arxiv, openalex, openreview: read the source from its start, not after what an interrupted run stored")
	positional, err := parseInterleaved(fs, "import", args[1:], stdout)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return usageError{fmt.Sprintf("import %s needs exactly one argument; sources: %s", kind, importSources)}
	}
	if len(categories) > 0 && kind != "arxiv-snapshot" {
		return usageError{"import: --category is for arxiv-snapshot"}
	}
	name := positional[0]
	if *limit < 1 {
		return usageError{"import: --max must be at least 1"}
	}
	var (
		file   io.Reader
		head   []byte // the file's first bytes, to say what it is if it holds no record
		report = importReporter(stderr, name, cfg.ProgressEvery)
		finish = func() {}
	)
	if fileSource(kind) {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		var r io.Reader
		r, report, finish = fileProgress(stderr, name, f, cfg.ProgressEvery)
		if file, err = seeds.Decompressed(r); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		b := bufio.NewReader(file)
		head, _ = b.Peek(4096)
		file = b
	}
	src, own, err := openSource(ctx, cfg, log, kind, name, file, categories, *limit)
	if err != nil {
		return err
	}
	tags = append(tags, own...)
	src, at, err := resume(cfg, kind, name, *limit, tags, *restart, src)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if at != "" {
		fmt.Fprintf(stderr, "%s: resuming after record %s, where an interrupted run stopped (--restart reads from the start)\n",
			name, strings.Fields(at)[0])
	}
	eng, store, err := openEngine(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer store.Close()
	fmt.Fprintf(stderr, "%s: importing (%s) with tags %v\n", name, kind, []string(tags))
	sum, err := eng.Import(ctx, src, search.ImportOptions{Tags: tags, Progress: report})
	finish()
	reportRejections(stderr, name, sum)
	if err != nil && sum.Read == 0 && at == "" && len(bytes.TrimSpace(head)) > 0 {
		return fmt.Errorf("%s: %w; %s", name, err, likelyFormat(head))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if sum.Read == 0 && at == "" && len(bytes.TrimSpace(head)) > 0 {
		return fmt.Errorf("%s: no %s record in a file that is not empty; %s", name, kind, likelyFormat(head))
	}
	fmt.Fprintf(stdout, "%s: %s\n", name, importSummary(sum))
	return nil
}

// openSource opens the source kind names: a network source asked for
// target (a venue id, a query, a filter), or a file source reading file.
// It returns the source and the tags its papers get by default.
func openSource(ctx context.Context, cfg Config, log *slog.Logger, kind, target string, file io.Reader, categories []string, limit int) (search.Source, []string, error) {
	client := func(name string, every time.Duration) *fetch.Client {
		c := fetch.New(name, every)
		c.UserAgent, c.Log = userAgent, log
		return c
	}
	switch kind {
	case "arxiv":
		return arxiv.NewAPIReader(ctx, client("arXiv", arxiv.RequestSpacing), cfg.ArxivURL, target, limit), []string{"arxiv"}, nil
	case "openalex":
		return openalex.NewReader(ctx, client("OpenAlex", 0), cfg.OpenAlexURL, target, cfg.OpenAlexEmail, limit), []string{"openalex"}, nil
	case "openreview":
		var tags []string
		if tag := openreview.DefaultTag(target); tag != "" {
			tags = append(tags, tag)
		}
		return openreview.NewReader(ctx, client("OpenReview", 0), cfg.OpenReviewURL, target), tags, nil
	case "bibtex":
		return bibtex.NewReader(file), nil, nil
	case "csl":
		return csl.NewReader(file), nil, nil
	case "arxiv-snapshot":
		return arxiv.NewSnapshotReader(file, categories...), []string{"arxiv"}, nil
	}
	return nil, nil, usageError{fmt.Sprintf("import: unknown source %q; sources: %s", kind, importSources)}
}

// fileSource reports whether kind reads a file.
func fileSource(kind string) bool {
	return kind == "bibtex" || kind == "csl" || kind == "arxiv-snapshot"
}

// httpImporter opens the sources of POST /v1/imports.
func httpImporter(cfg Config, log *slog.Logger) api.Importer {
	return func(ctx context.Context, req wire.ImportRequest) (search.Source, []string, func(), error) {
		src, tags, err := openSource(ctx, cfg, log, req.Source, req.Target, strings.NewReader(req.Content), nil, *req.Max)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%w: %v", api.ErrBadImport, err)
		}
		// An interrupted import of the same request resumes after what it stored.
		src, at, err := resume(cfg, req.Source, req.Target, *req.Max, append(slices.Clone(req.Tags), tags...), false, src)
		if err != nil {
			return nil, nil, nil, err
		}
		if at != "" {
			log.Info("import resumes after an interrupted run", "source", req.Source, "target", req.Target, "position", at)
		}
		return src, tags, func() {}, nil
	}
}

// userAgent introduces papersearch to the APIs it imports from.
const userAgent = "papersearch (+https://github.com/papersearch/papersearch)"

// likelyFormat says what a file whose first bytes are head looks like, and
// which command reads it.
func likelyFormat(head []byte) string {
	head = bytes.TrimSpace(head)
	switch {
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
