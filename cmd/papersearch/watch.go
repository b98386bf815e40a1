package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/papersearch/papersearch/api/client"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/catalog/imports"
)

// watchList is what the watch command does with the watches: those of
// the service at PAPERSEARCH_SERVER, or those in the data folder, which a
// server on it runs (imports.Watches).
type watchList interface {
	Add(ctx context.Context, req imports.WatchRequest) (imports.Watch, error)
	List(ctx context.Context) ([]imports.Watch, error)
	Remove(ctx context.Context, id string) error
}

// remoteWatches are the watches of a service, their API types converted
// to the watches' own.
type remoteWatches struct{ c *client.Client }

func (r remoteWatches) Add(ctx context.Context, req imports.WatchRequest) (imports.Watch, error) {
	w, err := r.c.AddWatch(ctx, wire.WatchRequest(req))
	return imports.Watch(w), err
}

func (r remoteWatches) List(ctx context.Context) ([]imports.Watch, error) {
	res, err := r.c.Watches(ctx)
	out := make([]imports.Watch, len(res.Watches))
	for i, w := range res.Watches {
		out[i] = imports.Watch(w)
	}
	return out, err
}

func (r remoteWatches) Remove(ctx context.Context, id string) error { return r.c.RemoveWatch(ctx, id) }

// watchHelp prints the watch command's usage, with a subcommand's flags
// when one is named.
func watchHelp(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) > 0 && slices.Contains(watchSubcommands, args[0]) {
		return watchCmd(ctx, Config{}, nil, append([]string{args[0]}, "-h"), stdout)
	}
	return printHelp(stdout, "watch", nil)
}

// watchSubcommands are the subcommands of papersearch watch.
var watchSubcommands = []string{"add", "list", "rm", "run"}

// watchCmd runs papersearch watch add|list|rm|run.
func watchCmd(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if wantsHelp(args) {
			return printHelp(stdout, "watch", nil)
		}
		return usageError{"watch needs a subcommand: add, list, rm or run; see papersearch watch -h"}
	}
	sub, args := args[0], args[1:]
	var (
		req          imports.WatchRequest
		every, since string
		tags         tagFlags
		max          int
		asJSON       bool
	)
	fs := flag.NewFlagSet("watch "+sub, flag.ContinueOnError)
	fs.BoolVar(&asJSON, "json", false, "print the API's JSON instead of a table")
	want := 1 // positional arguments
	switch sub {
	case "add":
		fs.StringVar(&every, "every", imports.DefaultWatchEvery, "the time between runs: hours, days or weeks (6h, 1d, 1w)")
		fs.Var(&tags, "tag", "a tag every paper the watch imports gets (repeat for several)")
		fs.IntVar(&max, "max", imports.DefaultPapers, "the most papers one run imports")
		fs.StringVar(&since, "since", "", "the day (YYYY-MM-DD) the first run reads from, for arxiv and openalex (default: 7 days ago)")
		want = 2
	case "list":
		want = 0
	case "rm", "run":
	default:
		return usageError{fmt.Sprintf("watch: unknown subcommand %q; it is add, list, rm or run", sub)}
	}
	positional, err := parseInterleaved(fs, "watch", args, stdout)
	if err != nil {
		return err
	}
	if len(positional) != want {
		noun := "arguments"
		if want == 1 {
			noun = "argument"
		}
		return usageError{fmt.Sprintf("watch %s takes %d %s, got %d; see papersearch watch -h", sub, want, noun, len(positional))}
	}
	list, done, err := openWatchList(ctx, cfg, log, sub == "run")
	if err != nil {
		return err
	}
	defer done()
	var out []imports.Watch
	switch sub {
	case "add":
		req.Source, req.Target, req.Tags, req.Max, req.Every = positional[0], positional[1], tags, &max, &every
		if since != "" {
			req.Since = &since
		}
		w, err := list.Add(ctx, req)
		if err != nil {
			return err
		}
		out = []imports.Watch{w}
	case "list":
		if out, err = list.List(ctx); err != nil {
			return err
		}
	case "rm":
		if err := list.Remove(ctx, positional[0]); err != nil {
			return err
		}
		_, err := fmt.Fprintf(stdout, "removed %s\n", positional[0])
		return err
	case "run":
		w, err := runWatch(ctx, cfg, list, positional[0])
		if err != nil {
			return err
		}
		out = []imports.Watch{w}
	}
	return printWatches(stdout, out, asJSON)
}

// openWatchList opens the watches the command works on: the service's
// when PAPERSEARCH_SERVER is set, else the configured store's; to run one here
// (running), with the engine over the local store. done closes them.
func openWatchList(ctx context.Context, cfg Config, log *slog.Logger, running bool) (watchList, func(), error) {
	if cfg.Server != "" {
		c, err := client.New(cfg.Server, cfg.APIKey, nil)
		return remoteWatches{c}, func() {}, err
	}
	if !running && cfg.QdrantURL == "" {
		w, err := openWatches(ctx, cfg, nil, nil, nil, log)
		if err != nil {
			return nil, nil, err
		}
		return w, func() { w.Close() }, nil
	}
	svc, err := openEngine(ctx, cfg, log)
	if err != nil {
		return nil, nil, err
	}
	sources := importConfig(cfg, log)
	w, err := openWatches(ctx, cfg, svc.store, svc.cat, sources.Open, log)
	if err != nil {
		svc.store.Close()
		return nil, nil, err
	}
	return w, func() { w.Close(); svc.store.Close() }, nil
}

// runWatch runs a watch now: here, when the watches are the data
// folder's; by the service, which starts it within its next look,
// otherwise.
func runWatch(ctx context.Context, cfg Config, list watchList, id string) (imports.Watch, error) {
	if here, ok := list.(*imports.Watches); ok {
		return here.RunHere(ctx, id)
	}
	c, err := client.New(cfg.Server, cfg.APIKey, nil)
	if err != nil {
		return imports.Watch{}, err
	}
	w, err := c.RunWatch(ctx, id)
	return imports.Watch(w), err
}

// printWatches prints watches as a table, or as the API's JSON.
func printWatches(w io.Writer, watches []imports.Watch, asJSON bool) error {
	if asJSON {
		out := wire.WatchesResponse{Watches: make([]wire.Watch, len(watches))}
		for i, x := range watches {
			out.Watches[i] = wire.Watch(x)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(watches) == 0 {
		_, err := fmt.Fprintln(w, "no watches; add one with 'papersearch watch add SOURCE TARGET'")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSOURCE\tTARGET\tEVERY\tTAGS\tNEXT RUN\tLAST RUN")
	for _, x := range watches {
		next := x.NextRun.Local().Format(time.DateTime)
		if x.Running {
			next = "running now"
		}
		last := "never"
		if x.LastFinished != nil {
			last = fmt.Sprintf("%s: %d read, %d new", x.LastFinished.Local().Format(time.DateTime), x.LastRead, x.LastAdded)
			if x.LastError != "" {
				last = x.LastFinished.Local().Format(time.DateTime) + ": failed: " + x.LastError
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(x.ID), cell(x.Source), cell(x.Target), cell(x.Every),
			cell(strings.Join(x.Tags, ",")), next, cell(last))
	}
	return tw.Flush()
}
