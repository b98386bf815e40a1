package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/qdrant"
	"github.com/papersearch/papersearch/search/sqlite"
)

// evalCmd builds a fresh index of a BEIR corpus and reports nDCG@10,
// recall@100 and MRR@10 per mode.
func evalCmd(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	corpus := fs.String("corpus", "", "BEIR corpus: JSONL (or .jsonl.gz) with _id, title, text")
	queriesFile := fs.String("queries", "", "BEIR queries: JSONL with _id, text")
	qrelsFile := fs.String("qrels", "", "BEIR judgements: TSV with a header, query-id corpus-id score")
	mode := fs.String("mode", "all", "all, hybrid, dense or lexical")
	asJSON := fs.Bool("json", false, "print JSON")
	sweep := fs.Bool("fusion-sweep", false, "also measure RRF, margin, and evidence, weighted, distribution-based (dbsf) and max-normalised fusion at dense weights 0.1 to 0.9 in steps of 0.05")
	misses := fs.Bool("misses", false, "also list each query whose relevant document is not first in hybrid mode, with its rank in every mode")
	rawQueries := fs.Bool("raw-queries", false, "embed queries as typed, without the model's query instruction")
	denseWeight := fs.Float64("dense-weight", 0, "dense weight of the default fusion rule in hybrid mode and --misses (0: its own)")
	sample := fs.Int("sample", 0, "index only this many documents, the ones whose ids come first by SHA-256 (a fixed sample), plus every judged one (0: all)")
	if err := parseFlags(fs, "eval", args, stdout); err != nil {
		return err
	}
	if *corpus == "" || *queriesFile == "" || *qrelsFile == "" || fs.NArg() > 0 {
		return usageError{"eval needs --corpus, --queries and --qrels (BEIR files)"}
	}
	modes := []search.Mode{search.Lexical, search.Dense, search.Hybrid}
	switch *mode {
	case "all":
	case "hybrid", "dense", "lexical":
		modes = []search.Mode{search.Mode(*mode)}
	default:
		return usageError{"eval: --mode must be all, hybrid, dense or lexical"}
	}

	papers, rejected, err := readCorpus(*corpus)
	if err != nil {
		return err
	}
	if len(rejected) > 0 {
		fmt.Fprintf(stderr, "%s: %d records rejected, first: line %d: %v\n", *corpus, len(rejected), rejected[0].Line, rejected[0].Err)
	}
	queries, err := readWith(*queriesFile, search.ReadQueries)
	if err != nil {
		return err
	}
	qrels, err := readWith(*qrelsFile, search.ReadQrels)
	if err != nil {
		return err
	}
	if *sample > 0 {
		papers = search.Sample(papers, *sample, qrels)
	}

	inner, _, err := newEmbedder(ctx, cfg, log)
	if err != nil {
		return err
	}
	cachePath, err := embed.DefaultCachePath()
	if err != nil {
		return err
	}
	cache, closeCache, err := cached(inner, cachePath)
	if err != nil {
		return err
	}
	defer closeCache()
	store, cleanup, err := evalStore(ctx, cfg, log, cache.Info(), papers)
	if err != nil {
		return err
	}
	defer cleanup()
	opts := search.Options{Logger: log, IngestBatch: 64, RawQueries: *rawQueries}
	if *denseWeight > 0 {
		f := search.DefaultFusion
		f.DenseWeight = *denseWeight
		opts.Fusion = &f
	}
	eng, err := search.NewEngine(store, cache, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "eval: indexing %d documents into a fresh %s index (embeddings cached in %s)\n", len(papers), store.Kind(), cachePath)
	last := time.Now()
	sum, err := eng.Ingest(ctx, papers, func(p search.IngestProgress) {
		if time.Since(last) > 5*time.Second || p.Done == p.Total {
			last = time.Now()
			fmt.Fprintf(stderr, "eval: %d/%d documents indexed (%.1f/s, eta %s)\n", p.Done, p.Total,
				float64(p.Done)/p.Elapsed.Seconds(), p.ETA().Round(time.Second))
		}
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "eval: indexed in %s; running %d queries per mode\n", sum.Took.Round(time.Millisecond), len(queries))

	var results []search.Metrics
	for _, m := range modes {
		r, err := eng.Evaluate(ctx, queries, qrels, m)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	if *sweep {
		fusions := []search.Fusion{{Method: search.RRF}}
		for _, w := range []float64{0.3, 0.4, 0.5} {
			for _, g := range []float64{2, 5, 10, 20} {
				fusions = append(fusions, search.Fusion{Method: search.Margin, DenseWeight: w, MarginGain: g})
			}
		}
		for _, m := range []search.FusionMethod{search.Evidence, search.Weighted, search.DBSF, search.MaxNorm} {
			for w := 2; w <= 18; w++ {
				fusions = append(fusions, search.Fusion{Method: m, DenseWeight: float64(w) / 20})
			}
		}
		for _, f := range fusions {
			r, err := eng.WithFusion(f).Evaluate(ctx, queries, qrels, search.Hybrid)
			if err != nil {
				return err
			}
			results = append(results, r)
		}
	}
	if *misses {
		if err := printMisses(ctx, eng, queries, qrels, stderr); err != nil {
			return err
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"corpus": *corpus, "documents": len(papers), "model": cache.Info().Name,
			"store": store.Kind(), "results": results})
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODE\tFUSION\tnDCG@10\tRECALL@100\tMRR@10\tFIRST\tTOP 10\tQUERIES")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%.4f\t%.4f\t%.4f\t%.1f%%\t%.1f%%\t%d\n", r.Mode, r.Fusion, r.NDCG10, r.Recall100, r.MRR10,
			100*r.First, 100*r.Top10, r.Queries)
	}
	return tw.Flush()
}

func readWith[T any](name string, read func(io.Reader) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(name)
	if err != nil {
		return zero, err
	}
	defer f.Close()
	v, err := read(f)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}

// evalStore is a fresh, empty store for an evaluation and its cleanup: a
// new Qdrant collection (BM25 normalised by this corpus's average length)
// when Qdrant is configured, else an embedded store in a temporary folder.
func evalStore(ctx context.Context, cfg Config, log *slog.Logger, model embed.ModelInfo, papers []papersearch.Paper) (search.Store, func(), error) {
	if cfg.QdrantURL != "" {
		var total int
		for _, p := range papers {
			total += len(lexical.Analyze(p.Text()))
		}
		suffix := make([]byte, 4)
		rand.Read(suffix)
		qc := cfg.qdrantConfig("eval_"+hex.EncodeToString(suffix), log)
		qc.AvgDocLen = float64(total) / float64(max(len(papers), 1))
		q, err := qdrant.Open(ctx, qc, model)
		if err != nil {
			return nil, nil, err
		}
		return q, func() { q.Drop(context.Background()); q.Close() }, nil
	}
	dir, err := os.MkdirTemp("", "papersearch-eval-")
	if err != nil {
		return nil, nil, err
	}
	s, err := sqlite.Open(ctx, filepath.Join(dir, "eval.db"), model)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return s, func() { s.Close(); os.RemoveAll(dir) }, nil
}

// printMisses lists the queries whose best relevant document is not first
// in hybrid mode, with its rank in each mode (0: not in the first 100).
func printMisses(ctx context.Context, eng *search.Engine, queries []search.EvalQuery, qrels search.Qrels, w io.Writer) error {
	rank := func(q search.EvalQuery, m search.Mode) (int, error) {
		res, err := eng.Search(ctx, search.Query{Text: q.Text, Mode: m, Limit: search.MaxLimit})
		if err != nil && !errors.Is(err, search.ErrInvalidQuery) {
			return 0, err
		}
		for _, h := range res.Hits {
			if qrels[q.ID][h.ID] > 0 {
				return h.Rank, nil
			}
		}
		return 0, nil
	}
	fmt.Fprintln(w, "misses: query\thybrid\tdense\tlexical\ttext")
	for _, q := range queries {
		if _, ok := qrels[q.ID]; !ok {
			continue
		}
		var r [3]int
		for i, m := range []search.Mode{search.Hybrid, search.Dense, search.Lexical} {
			n, err := rank(q, m)
			if err != nil {
				return fmt.Errorf("query %s: %w", q.ID, err)
			}
			r[i] = n
		}
		if r[0] != 1 {
			fmt.Fprintf(w, "misses: %s\t%d\t%d\t%d\t%s\n", q.ID, r[0], r[1], r[2], q.Text)
		}
	}
	return nil
}

// cached wraps e with the embedding cache at path: a Pair part by part, so
// each model's vectors are cached under its own name and with its own
// instructions.
func cached(e embed.Embedder, path string) (embed.Embedder, func(), error) {
	if p, ok := e.(*embed.Pair); ok {
		a, b := p.Parts()
		ca, closeA, err := cached(a, path)
		if err != nil {
			return nil, nil, err
		}
		cb, closeB, err := cached(b, path)
		if err != nil {
			closeA()
			return nil, nil, err
		}
		return embed.NewPair(ca, cb), func() { closeA(); closeB() }, nil
	}
	c, err := embed.NewCache(e, path)
	if err != nil {
		return nil, nil, err
	}
	return c, func() { c.Close() }, nil
}
