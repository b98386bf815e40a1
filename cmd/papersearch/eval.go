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
	sampleFrom := fs.Int("sample-from", 0, "with --sample, skip this many documents of the SHA-256 order first (a second sample, disjoint from the first)")
	titles := fs.Bool("titles", false, "query with each document's title, the documents indexed without their titles (no --queries or --qrels)")
	overlapOnly := fs.Bool("overlap", false, "print each query's overlap with its relevant documents (the share of its content words they hold) and stop, without indexing")
	featuresFile := fs.String("features", "", "also write each query's second-stage features of its first candidates to this JSONL file (for training a ranker)")
	baselineFile := fs.String("baseline", "", "measure differences from the hybrid run of an earlier eval's --json output (another build or setting, same corpus and queries) instead of this build's default")
	heldOut := fs.Bool("held-out", false, "report the held-out half of the queries (a fixed split by SHA-256 of the query id) instead of the dev half; make no choice on it")
	if err := parseFlags(fs, "eval", args, stdout); err != nil {
		return err
	}
	if *corpus == "" || (*queriesFile == "" || *qrelsFile == "") != *titles || fs.NArg() > 0 {
		return usageError{"eval needs --corpus, and --queries and --qrels (BEIR files) or --titles"}
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
	var queries []search.EvalQuery
	var qrels search.Qrels
	if !*titles {
		if queries, err = readWith(*queriesFile, search.ReadQueries); err != nil {
			return err
		}
		if qrels, err = readWith(*qrelsFile, search.ReadQrels); err != nil {
			return err
		}
	}
	if *sample > 0 {
		papers = search.Sample(papers, *sampleFrom, *sample, qrels)
	}
	if *titles {
		queries, qrels = search.TitleQueries(papers)
	}
	texts := make(map[string]string, len(papers))
	for _, p := range papers {
		texts[p.ID] = p.Text()
	}
	if *overlapOnly {
		return printOverlap(queries, qrels, texts, stdout)
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

	hybrid, err := eng.Evaluate(ctx, queries, qrels, texts, search.Hybrid)
	if err != nil {
		return err
	}
	base := hybrid
	if *baselineFile != "" {
		if base, err = readBaseline(*baselineFile); err != nil {
			return err
		}
	}
	var runs []search.Run
	for _, m := range modes {
		if m == search.Hybrid {
			runs = append(runs, hybrid)
			continue
		}
		r, err := eng.Evaluate(ctx, queries, qrels, texts, m)
		if err != nil {
			return err
		}
		runs = append(runs, r)
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
			r, err := eng.WithFusion(f).Evaluate(ctx, queries, qrels, texts, search.Hybrid)
			if err != nil {
				return err
			}
			runs = append(runs, r)
		}
	}
	if *featuresFile != "" {
		f, err := os.Create(*featuresFile)
		if err != nil {
			return err
		}
		err = eng.EvalFeatures(ctx, queries, qrels, texts, f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	if *misses {
		if err := printMisses(ctx, eng, queries, qrels, *heldOut, stderr); err != nil {
			return err
		}
	}
	split := "dev"
	if *heldOut {
		split = "held-out"
	}
	inSplit := func(o search.Outcome) bool { return search.HeldOut(o.ID) == *heldOut }
	type row struct {
		Band string `json:"band"`
		search.Summary
	}
	var rows []row
	for _, r := range runs {
		for _, band := range search.Bands() {
			s := search.Summarize(r, &base, func(o search.Outcome) bool { return inSplit(o) && search.InBand(o.Overlap, band) })
			if s.Queries > 0 {
				rows = append(rows, row{band, s})
			}
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"corpus": *corpus, "documents": len(papers), "model": cache.Info().Name,
			"store": store.Kind(), "split": split, "results": rows, "baseline": base, "hybrid": hybrid, "runs": runs})
	}
	against := "hybrid " + base.Fusion
	if *baselineFile != "" {
		against = *baselineFile + "'s hybrid " + base.Fusion
	}
	fmt.Fprintf(stdout, "%s split; Δ is the paired difference from %s, ± its standard error\n", split, against)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODE\tFUSION\tOVERLAP\tQUERIES\tnDCG@10\tΔ\tFIRST\tΔ\tTOP 10\tΔ\tMRR@10\tRECALL@100")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.4f\t%+.4f ± %.4f\t%.1f%%\t%+.1f ± %.1f\t%.1f%%\t%+.1f ± %.1f\t%.4f\t%.4f\n",
			r.Mode, r.Fusion, r.Band, r.Queries, r.NDCG10, r.Delta.NDCG10, r.DeltaSE.NDCG10,
			100*r.First, 100*r.Delta.First, 100*r.DeltaSE.First, 100*r.Top10, 100*r.Delta.Top10, 100*r.DeltaSE.Top10,
			r.MRR10, r.Recall100)
	}
	return tw.Flush()
}

// readBaseline reads the hybrid run of an eval's JSON output.
func readBaseline(name string) (search.Run, error) {
	var out struct {
		Hybrid search.Run `json:"hybrid"`
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return search.Run{}, err
	}
	if err := json.Unmarshal(b, &out); err != nil || len(out.Hybrid.Outcomes) == 0 {
		return search.Run{}, fmt.Errorf("%s: not the --json output of papersearch eval (no hybrid run): %v", name, err)
	}
	return out.Hybrid, nil
}

// printOverlap lists each judged query's overlap with its relevant
// documents and band, and the share of queries per band.
func printOverlap(queries []search.EvalQuery, qrels search.Qrels, texts map[string]string, w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUERY\tOVERLAP\tBAND\tSPLIT\tTEXT")
	count := map[string]int{}
	for _, q := range queries {
		rels, ok := qrels[q.ID]
		if !ok {
			continue
		}
		o := search.Judge(q, nil, rels, texts).Overlap
		band := ""
		for _, b := range search.Bands()[1:] {
			if search.InBand(o, b) {
				band = b
			}
		}
		count[band]++
		count[search.BandAll]++
		split := "dev"
		if search.HeldOut(q.ID) {
			split = "held-out"
		}
		fmt.Fprintf(tw, "%s\t%.0f%%\t%s\t%s\t%s\n", q.ID, 100*o, band, split, q.Text)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, b := range search.Bands() {
		fmt.Fprintf(w, "%s: %d queries\n", b, count[b])
	}
	return nil
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
func printMisses(ctx context.Context, eng *search.Engine, queries []search.EvalQuery, qrels search.Qrels, heldOut bool, w io.Writer) error {
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
		if _, ok := qrels[q.ID]; !ok || search.HeldOut(q.ID) != heldOut {
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
