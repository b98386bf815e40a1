package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api"
	"github.com/papersearch/papersearch/api/client"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/storage"
	"github.com/papersearch/papersearch/seeds"
)

// ingest brings the papers of each file into the store through the
// catalog's one pipeline (Import: streamed in batches, versions of a work
// merged), their vectors read from and kept in the embedding cache, and
// prints a summary.
func ingest(ctx context.Context, cfg Config, log *slog.Logger, files []string, stdout, stderr io.Writer) error {
	if len(files) == 0 {
		return usageError{"ingest needs at least one corpus file (seed text or JSONL, optionally gzipped)"}
	}
	embedder, batch, cache, err := cachedEmbedder(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer cache.close()
	svc, err := engineWith(ctx, cfg, log, embedder, batch)
	if err != nil {
		return err
	}
	defer svc.store.Close()
	defer cache.report(stderr)
	for _, name := range files {
		if err := ingestFile(ctx, cfg, svc.cat, name, stdout, stderr); err != nil {
			return err
		}
	}
	return nil
}

// ingestFile imports one corpus file.
func ingestFile(ctx context.Context, cfg Config, cat *catalog.Catalog, name string, stdout, stderr io.Writer) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	r, view := fileProgress(stderr, name, f, cfg.ProgressEvery)
	src, err := seeds.NewReader(r, formatOf(name))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	fmt.Fprintf(stderr, "%s: ingesting\n", name)
	sum, err := cat.Import(ctx, src, catalog.ImportOptions{Progress: view.report})
	view.finish()
	reportRejections(stderr, name, sum)
	if reportInterrupted(ctx, stderr, name, sum, err) {
		return err
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: stopped; what was stored stays: %s\n", name, importSummary(sum))
		return fmt.Errorf("%s: %w", name, err)
	}
	fmt.Fprintf(stdout, "%s: %s\n", name, importSummary(sum))
	return nil
}

// formatOf is the corpus format a file's name says (.jsonl, .jsonl.gz:
// JSON lines, whatever its first line holds), else 0: told from the
// file's first bytes.
func formatOf(name string) seeds.Format {
	if strings.HasSuffix(strings.TrimSuffix(strings.ToLower(name), ".gz"), ".jsonl") {
		return seeds.JSONL
	}
	return 0
}

// reportInterrupted says, when a signal stopped an import (ctx done, err
// its cancellation), what it had stored, which stays: the same command
// again skips what it stored unchanged, and a network source's import
// resumes after it. It reports whether it did.
func reportInterrupted(ctx context.Context, w io.Writer, name string, sum catalog.ImportSummary, err error) bool {
	if ctx.Err() == nil || !errors.Is(err, context.Canceled) {
		return false
	}
	fmt.Fprintf(w, "%s: interrupted; what was stored stays, and the same command again goes on from it: %s\n", name, importSummary(sum))
	return true
}

// reportRejections lists the records an import rejected.
func reportRejections(w io.Writer, name string, sum catalog.ImportSummary) {
	for _, le := range sum.Rejections {
		fmt.Fprintf(w, "%s:%d: rejected: %v\n", name, le.Line, le.Err)
	}
	if sum.Rejected > len(sum.Rejections) {
		fmt.Fprintf(w, "%s: %d more rejected records not listed\n", name, sum.Rejected-len(sum.Rejections))
	}
}

// importSummary says what an import did, in one line.
func importSummary(sum catalog.ImportSummary) string {
	return fmt.Sprintf("%d records; %d new, %d updated, %d unchanged; %d merged with another version of their work; %d rejected (%d without an abstract); %d embedded (the embedding cache's vectors included), %d kept their stored vectors; %s",
		sum.Read, sum.New, sum.Updated, sum.Unchanged, sum.Merged, sum.Rejected, sum.NoAbstract, sum.Embedded, sum.Reused,
		sum.Took.Round(time.Millisecond))
}

func readCorpus(name string) ([]papersearch.Paper, []*seeds.LineError, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	papers, rejected, err := seeds.ReadAll(f, 0)
	if err != nil {
		return nil, rejected, fmt.Errorf("%s: %w", name, err)
	}
	return papers, rejected, nil
}

// queryFlags are the flags shared by search and similar: the API's
// mode, filters and limit.
type queryFlags struct {
	limit            int
	json             bool
	mode             string
	yearMin, yearMax int
	venues, tags     tagFlags
	author           string
	since, until, by string
	aspect           string // background, method or result
	method           string // recommend's
}

// filter is the API's filter the flags ask for.
func (qf queryFlags) filter() papersearch.Filter {
	return papersearch.Filter{YearMin: qf.yearMin, YearMax: qf.yearMax, Venues: qf.venues, Author: qf.author, Tags: qf.tags,
		Since: papersearch.Bound(qf.since), Until: papersearch.Bound(qf.until), By: papersearch.DateBy(qf.by)}
}

// parseInterleaved parses args with fs, flags before, between or after the
// positional arguments, which it returns.
func parseInterleaved(fs *flag.FlagSet, cmd string, args []string, stdout io.Writer) ([]string, error) {
	var positional []string
	for {
		if err := parseFlags(fs, cmd, args, stdout); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// parseQueryArgs parses flags placed before or after the one positional
// argument, which it returns.
func parseQueryArgs(cmd, what string, args []string, stdout io.Writer) (string, queryFlags, error) {
	var qf queryFlags
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.IntVar(&qf.limit, "limit", search.DefaultLimit, fmt.Sprintf("number of results, 1 to %d", search.MaxLimit))
	fs.BoolVar(&qf.json, "json", false, "print the API's JSON instead of a table")
	if cmd == "recommend" {
		fs.StringVar(&qf.method, "method", "", "how the collection ranks papers: neighbours (the default), centroid, rocchio or logistic")
	} else {
		fs.StringVar(&qf.mode, "mode", "hybrid", "hybrid, dense or lexical")
		fs.StringVar(&qf.aspect, "aspect", "", "rank by the sentences of one aspect: background, method or result")
	}
	fs.IntVar(&qf.yearMin, "year-min", 0, "only papers of this year or later")
	fs.IntVar(&qf.yearMax, "year-max", 0, "only papers of this year or earlier")
	fs.Var(&qf.venues, "venue", "only papers of this venue, case-insensitive (repeat for any of several)")
	fs.StringVar(&qf.author, "author", "", `only papers with an author whose name's words start with each of these ("geoff hin")`)
	fs.Var(&qf.tags, "tag", "only papers holding this tag (repeat for any of several)")
	fs.StringVar(&qf.since, "since", "", "only papers published on or after this day (2026-11-01) or RFC 3339 time")
	fs.StringVar(&qf.until, "until", "", "only papers published on or before this day or time")
	fs.StringVar(&qf.by, "by", "", "what --since and --until bound: published (the default) or added (when the paper was stored here)")
	positional, err := parseInterleaved(fs, cmd, args, stdout)
	if err != nil {
		return "", qf, err
	}
	if len(positional) != 1 || strings.TrimSpace(positional[0]) == "" {
		return "", qf, usageError{fmt.Sprintf("%s needs exactly one %s, not empty (quote it if it has spaces); see papersearch %s -h", cmd, what, cmd)}
	}
	if _, err := search.RequestedLimit(&qf.limit); err != nil {
		return "", qf, usageError{fmt.Sprintf("%s: --limit must be between 1 and %d", cmd, search.MaxLimit)}
	}
	return positional[0], qf, nil
}

func searchCmd(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout io.Writer) error {
	return queryCmd(ctx, cfg, log, stdout, args, queryCommand{name: "search", what: "QUERY",
		remote: func(c *client.Client, query string, qf queryFlags) (wire.SearchResponse, error) {
			f := qf.filter()
			return c.Search(ctx, wire.SearchRequest{Query: query, Limit: &qf.limit, Mode: qf.mode, Filters: &f, Aspect: qf.aspect})
		},
		local: func(eng *search.Engine, query string, qf queryFlags) (search.Results, error) {
			return eng.Search(ctx, search.Query{Text: query, Limit: qf.limit, Mode: search.Mode(qf.mode), Filter: qf.filter(),
				Aspect: search.Aspect(qf.aspect)})
		}})
}

func recommendCmd(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout io.Writer) error {
	return queryCmd(ctx, cfg, log, stdout, args, queryCommand{name: "recommend", what: "collection TAG",
		remote: func(c *client.Client, tag string, qf queryFlags) (wire.SearchResponse, error) {
			return c.Recommend(ctx, tag, client.RecommendParams{Limit: qf.limit, Method: qf.method, Filter: qf.filter()})
		},
		local: func(eng *search.Engine, tag string, qf queryFlags) (search.Results, error) {
			res, err := eng.Recommend(ctx, search.RecommendQuery{Tag: tag, Limit: qf.limit, Method: search.RecommendMethod(qf.method), Filter: qf.filter()})
			if errors.Is(err, search.ErrEmptyCollection) {
				return res, fmt.Errorf("no paper is in the collection %q: tag some (papersearch import --tag, or POST /v1/collections/%s/papers)", tag, tag)
			}
			return res, err
		}})
}

func similarCmd(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout io.Writer) error {
	return queryCmd(ctx, cfg, log, stdout, args, queryCommand{name: "similar", what: "paper ID",
		remote: func(c *client.Client, id string, qf queryFlags) (wire.SearchResponse, error) {
			return c.Similar(ctx, id, client.SimilarParams{Limit: qf.limit, Aspect: qf.aspect, Mode: qf.mode, Filter: qf.filter()})
		},
		local: func(eng *search.Engine, id string, qf queryFlags) (search.Results, error) {
			res, err := eng.Similar(ctx, search.SimilarQuery{ID: id, Limit: qf.limit, Aspect: search.Aspect(qf.aspect),
				Mode: search.Mode(qf.mode), Filter: qf.filter()})
			if errors.Is(err, storage.ErrNotFound) && qf.aspect == "" {
				return res, fmt.Errorf("no paper has the id %q", id)
			}
			return res, err
		}})
}

// queryCommand is a command that takes one argument (what) and prints
// results: through the service at PAPERSEARCH_SERVER when it is set
// (remote), else from the local store (local).
type queryCommand struct {
	name, what string
	remote     func(c *client.Client, arg string, qf queryFlags) (wire.SearchResponse, error)
	local      func(eng *search.Engine, arg string, qf queryFlags) (search.Results, error)
}

// queryCmd runs qc with args.
func queryCmd(ctx context.Context, cfg Config, log *slog.Logger, stdout io.Writer, args []string, qc queryCommand) error {
	arg, qf, err := parseQueryArgs(qc.name, qc.what, args, stdout)
	if err != nil {
		return err
	}
	if cfg.Server != "" {
		c, err := client.New(cfg.Server, cfg.APIKey, nil)
		if err != nil {
			return err
		}
		resp, err := qc.remote(c, arg, qf)
		if err != nil {
			return fmt.Errorf("%s: %w", cfg.Server, err)
		}
		return printResults(stdout, resp, qf.json)
	}
	svc, err := openEngine(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer svc.store.Close()
	res, err := qc.local(svc.eng, arg, qf)
	if err != nil {
		return err
	}
	return printResults(stdout, api.NewSearchResponse(res), qf.json)
}

func printResults(w io.Writer, res wire.SearchResponse, asJSON bool) error {
	if asJSON {
		// JSON escapes C0 controls but writes C1 and bidirectional ones as
		// they are, which a terminal would read.
		for i := range res.Results {
			p := &res.Results[i].Paper
			p.Title, p.Abstract, p.Venue = papersearch.StripControls(p.Title), papersearch.StripControls(p.Abstract), papersearch.StripControls(p.Venue)
			for j, a := range p.Authors {
				p.Authors[j] = papersearch.StripControls(a)
			}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	if len(res.Results) == 0 && res.Index.Papers == 0 {
		_, err := fmt.Fprintln(w, "no results: the store is empty; add papers with 'papersearch ingest' or 'papersearch import', or start 'papersearch serve', which seeds an empty store")
		return err
	}
	if len(res.Results) == 0 {
		_, err := fmt.Fprintln(w, "no results")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	const maxTitleColumn = 100              // characters: a longer title (the whole is in --json) would widen every row
	near := len(res.Results[0].Because) > 0 // a recommendation's
	if near {
		fmt.Fprintln(tw, "RANK\tSCORE\tID\tTITLE\tNEAREST MEMBER")
	} else {
		fmt.Fprintln(tw, "RANK\tSCORE\tID\tTITLE")
	}
	for _, h := range res.Results {
		title := h.Paper.Title
		where := strings.TrimSpace(h.Paper.Venue)
		if h.Paper.Year != 0 {
			where = strings.TrimSpace(where + " " + strconv.Itoa(h.Paper.Year))
		}
		if where != "" {
			title += " (" + where + ")"
		}
		title = papersearch.Shorten(cell(title), maxTitleColumn)
		id := cell(h.ID) // ids refuse C0 controls, not C1 or bidirectional ones
		if near && len(h.Because) > 0 {
			fmt.Fprintf(tw, "%d\t%.3f\t%s\t%s\t%s\n", h.Rank, h.Score, id, title, cell(h.Because[0].ID))
			continue
		}
		fmt.Fprintf(tw, "%d\t%.3f\t%s\t%s\n", h.Rank, h.Score, id, title)
	}
	return tw.Flush()
}

// cell is s as one cell of a table printed to a terminal, which reads
// what is printed: no control character (a paper stored before Complete
// removed them, a server's answer), and no tab or line break to shift the
// columns or forge a row.
func cell(s string) string {
	return strings.Join(strings.Fields(papersearch.StripControls(s)), " ")
}
