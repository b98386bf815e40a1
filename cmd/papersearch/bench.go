package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/bench"
	"github.com/papersearch/papersearch/search/qdrant"
	"github.com/papersearch/papersearch/search/sqlite"
	"github.com/papersearch/papersearch/seeds"
)

// defaultBenchCorpus is the shared ML paper corpus, when this checkout has
// ../shared beside it.
const defaultBenchCorpus = "../shared/data/papers/ml-papers.jsonl.gz"

// benchCmd measures ingest, latency and throughput end to end: a fresh
// store, the real HTTP server, concurrent clients.
func benchCmd(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	papersFile := fs.String("papers", "", "corpus (seed text or JSONL, .gz too); default "+defaultBenchCorpus+" when present, else the seeds")
	limit := fs.Int("limit", 0, "use only the first N papers (0: all)")
	clients := fs.Int("clients", 1, "concurrent HTTP clients")
	duration := fs.Duration("duration", 10*time.Second, "how long to drive each kind of request")
	storeKind := fs.String("store", "embedded", "embedded or qdrant (PAPERSEARCH_QDRANT_URL)")
	vectors := fs.String("vectors", "hash", "model (embed every paper) or hash (deterministic random vectors; free-text queries still use the model)")
	synthetic := fs.Int("synthetic", 0, "instead, measure dense top-10 over N synthetic 384-d vectors in the embedded store (latency, recall@10)")
	asJSON := fs.Bool("json", false, "print JSON")
	memProfile := fs.String("memprofile", "", "write a heap profile (go tool pprof) to this file once the requests have ended")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile (go tool pprof) of the serving phase, server and clients, to this file")
	only := fs.String("kinds", "", "drive only these kinds of request, comma-separated (of "+strings.Join(bench.Kinds(), ", ")+"); default all")
	if err := parseFlags(fs, "bench", args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"bench takes no arguments besides its flags; see papersearch bench -h"}
	}
	if *storeKind != "embedded" && *storeKind != "qdrant" || *vectors != "model" && *vectors != "hash" || *clients < 1 {
		return usageError{"bench: --store is embedded or qdrant, --vectors model or hash, --clients at least 1"}
	}
	var kinds []string
	if *only != "" {
		kinds = strings.Split(*only, ",")
		for _, k := range kinds {
			if !slices.Contains(bench.Kinds(), k) {
				return usageError{fmt.Sprintf("bench: --kinds: no kind of request %q; the kinds are %s", k, strings.Join(bench.Kinds(), ", "))}
			}
		}
	}
	if *synthetic > 0 {
		rep, err := bench.Synthetic(ctx, *synthetic, stderr)
		if err != nil {
			return err
		}
		return rep.Print(stdout, *asJSON)
	}
	model, err := embed.OpenLocal(cfg.Model, cfg.localOptions(log))
	if err != nil {
		return err
	}
	papers, err := benchCorpus(*papersFile, *limit)
	if err != nil {
		return err
	}
	opts := bench.Options{Papers: papers, StoreKind: *storeKind, Model: model, HashVectors: *vectors == "hash",
		Clients: *clients, Duration: *duration, Progress: stderr, Logger: log, Kinds: kinds}
	if *storeKind == "qdrant" {
		if cfg.QdrantURL == "" {
			return usageError{"bench --store qdrant needs PAPERSEARCH_QDRANT_URL"}
		}
		suffix := make([]byte, 4)
		rand.Read(suffix)
		q, err := qdrant.Open(ctx, cfg.qdrantConfig("bench_"+hex.EncodeToString(suffix), log), model.Info())
		if err != nil {
			return err
		}
		defer func() { q.Drop(context.WithoutCancel(ctx)); q.Close() }()
		opts.Store, opts.Settle = q, q.WaitOptimized
	} else {
		dir, err := os.MkdirTemp("", "papersearch-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		s, err := sqlite.Open(ctx, filepath.Join(dir, "bench.db"), model.Info())
		if err != nil {
			return err
		}
		defer s.Close()
		opts.Store, opts.Dir = s, dir
	}
	if *memProfile != "" {
		f, err := os.Create(*memProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		opts.MemProfile = f
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		opts.CPUProfile = f
	}
	rep, err := bench.Run(ctx, opts)
	if err != nil {
		return err
	}
	return rep.Print(stdout, *asJSON)
}

func benchCorpus(name string, limit int) ([]papersearch.Paper, error) {
	var papers []papersearch.Paper
	if name == "" {
		if _, err := os.Stat(defaultBenchCorpus); err == nil {
			name = defaultBenchCorpus
		}
	}
	if name == "" {
		p, err := seeds.NeurIPS2026()
		if err != nil {
			return nil, err
		}
		papers = p
	} else {
		p, _, err := readCorpus(name)
		if err != nil {
			return nil, err
		}
		papers = p
	}
	if limit > 0 && limit < len(papers) {
		papers = papers[:limit]
	}
	if len(papers) == 0 {
		return nil, errors.New("bench: the corpus is empty")
	}
	return papers, nil
}
