package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/eval"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/qdrant"
	"github.com/papersearch/papersearch/search/sqlite"
	"github.com/papersearch/papersearch/search/storage"
)

// evalCmd builds a fresh index of a BEIR corpus and reports nDCG@10,
// recall@100 and MRR@10 per mode.
func evalCmd(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	a, err := parseEvalArgs(args, stdout)
	if err != nil {
		return err
	}
	d, err := a.data(stderr)
	if err != nil {
		return err
	}
	if a.maps || a.recommend {
		ix, err := indexForEval(ctx, cfg, log, a, d.papers, stderr)
		if err != nil {
			return err
		}
		defer ix.close()
		if a.maps {
			return evalMap(ctx, ix, a, d.papers, stdout, stderr)
		}
		return evalRecommendations(ctx, ix, a, d.papers, stdout, stderr)
	}
	if a.overlapOnly {
		return printOverlap(d.queries, d.qrels, d.texts, stdout)
	}
	ix, err := indexForEval(ctx, cfg, log, a, d.papers, stderr)
	if err != nil {
		return err
	}
	defer ix.close()
	fmt.Fprintf(stderr, "eval: running %d queries per mode\n", len(d.queries))
	hybrid, runs, err := a.runs(ctx, ix.eng, d)
	if err != nil {
		return err
	}
	base := hybrid
	if a.baselineFile != "" {
		if base, err = readBaseline(a.baselineFile); err != nil {
			return err
		}
	}
	if a.featuresFile != "" {
		if err := writeFeatures(ctx, ix.eng, d, a.featuresFile); err != nil {
			return err
		}
	}
	if a.misses {
		if err := printMisses(ctx, ix.eng, d.queries, d.qrels, a.heldOut, stderr); err != nil {
			return err
		}
	}
	rows := evalRows(runs, base, a.heldOut)
	if a.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"corpus": a.corpus, "documents": len(d.papers), "model": ix.model,
			"store": ix.store, "split": a.split(), "results": rows, "baseline": base, "hybrid": hybrid, "runs": runs})
	}
	return printEvalRows(stdout, a, base, rows)
}

// evalArgs are eval's flags.
type evalArgs struct {
	corpus, queriesFile, qrelsFile, featuresFile, baselineFile                                 string
	modes                                                                                      []search.Mode
	asJSON, sweep, misses, rawQueries, titles, overlapOnly, heldOut, recommend, noTitles, maps bool
	denseWeight                                                                                float64
	sample, sampleFrom                                                                         int
}

// parseEvalArgs reads eval's flags.
func parseEvalArgs(args []string, stdout io.Writer) (evalArgs, error) {
	var a evalArgs
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.StringVar(&a.corpus, "corpus", "", "BEIR corpus: JSONL (or .jsonl.gz) with _id, title, text")
	fs.StringVar(&a.queriesFile, "queries", "", "BEIR queries: JSONL with _id, text")
	fs.StringVar(&a.qrelsFile, "qrels", "", "BEIR judgements: TSV with a header, query-id corpus-id score")
	mode := fs.String("mode", "all", "all, hybrid, dense or lexical")
	fs.BoolVar(&a.asJSON, "json", false, "print JSON")
	fs.BoolVar(&a.sweep, "fusion-sweep", false, "also measure RRF, margin, and evidence, weighted, distribution-based (dbsf) and max-normalised fusion at dense weights 0.1 to 0.9 in steps of 0.05")
	fs.BoolVar(&a.misses, "misses", false, "also list each query whose relevant document is not first in hybrid mode, with its rank in every mode")
	fs.BoolVar(&a.rawQueries, "raw-queries", false, "embed queries as typed, without the model's query instruction")
	fs.Float64Var(&a.denseWeight, "dense-weight", 0, "dense weight of the default fusion rule in hybrid mode and --misses (0: its own)")
	fs.IntVar(&a.sample, "sample", 0, "index only this many documents, the ones whose ids come first by SHA-256 (a fixed sample), plus every judged one (0: all)")
	fs.IntVar(&a.sampleFrom, "sample-from", 0, "with --sample, skip this many documents of the SHA-256 order first (a second sample, disjoint from the first)")
	fs.BoolVar(&a.titles, "titles", false, "query with each document's title, the documents indexed without their titles (no --queries or --qrels)")
	fs.BoolVar(&a.overlapOnly, "overlap", false, "print each query's overlap with its relevant documents (the share of its content words they hold) and stop, without indexing")
	fs.StringVar(&a.featuresFile, "features", "", "also write each query's second-stage features of its first candidates to this JSONL file (for training a ranker)")
	fs.StringVar(&a.baselineFile, "baseline", "", "measure differences from the hybrid run of an earlier eval's --json output (another build or setting, same corpus and queries) instead of this build's default")
	fs.BoolVar(&a.heldOut, "held-out", false, "report the held-out half of the queries (a fixed split by SHA-256 of the query id) instead of the dev half; make no choice on it")
	fs.BoolVar(&a.noTitles, "no-titles", false, "index the documents by their abstracts alone, as --titles does (its embeddings, cached, are then reused)")
	fs.BoolVar(&a.recommend, "recommend", false, "instead, measure recommendations for collections: each author of at least 8 papers of the corpus (JSONL papers with authors and years) is a collection of all but their latest 2, which should rank high among their year's papers; recall@20 and nDCG@20 per method, the dev half of the authors (or --held-out's)")
	fs.BoolVar(&a.maps, "map", false, "instead, lay the corpus out as the service's map and measure it: time, heap, trustworthiness and continuity at 10, and its clusters' agreement (AMI) with venue and field (JSONL papers with venues)")
	if err := parseFlags(fs, "eval", args, stdout); err != nil {
		return a, err
	}
	if a.maps {
		if a.corpus == "" || a.queriesFile != "" || a.qrelsFile != "" || a.titles || a.recommend || fs.NArg() > 0 {
			return a, usageError{"eval --map needs --corpus (papers with venues) and no queries"}
		}
		return a, nil
	}
	if a.recommend {
		if a.corpus == "" || a.queriesFile != "" || a.qrelsFile != "" || a.titles || fs.NArg() > 0 {
			return a, usageError{"eval --recommend needs --corpus (papers with authors and years) and no queries"}
		}
		return a, nil
	}
	if a.corpus == "" || (a.queriesFile == "" || a.qrelsFile == "") != a.titles || fs.NArg() > 0 {
		return a, usageError{"eval needs --corpus, and --queries and --qrels (BEIR files) or --titles"}
	}
	switch *mode {
	case "all":
		a.modes = []search.Mode{search.Lexical, search.Dense, search.Hybrid}
	case "hybrid", "dense", "lexical":
		a.modes = []search.Mode{search.Mode(*mode)}
	default:
		return a, usageError{"eval: --mode must be all, hybrid, dense or lexical"}
	}
	return a, nil
}

// split names the half of the queries reported.
func (a evalArgs) split() string {
	if a.heldOut {
		return "held-out"
	}
	return "dev"
}

// evalData is what eval measures on: the papers indexed, the queries, the
// judgements and each paper's text by id.
type evalData struct {
	papers  []papersearch.Paper
	queries []eval.EvalQuery
	qrels   eval.Qrels
	texts   map[string]string
}

// data reads the corpus, the queries and their judgements (or makes title
// queries), sampled as a asks.
func (a evalArgs) data(stderr io.Writer) (evalData, error) {
	var d evalData
	papers, rejected, err := readCorpus(a.corpus)
	if err != nil {
		return d, err
	}
	if len(rejected) > 0 {
		fmt.Fprintf(stderr, "%s: %d records rejected, first: line %d: %v\n", a.corpus, len(rejected), rejected[0].Line, rejected[0].Err)
	}
	if !a.titles && !a.recommend && !a.maps {
		if d.queries, err = readWith(a.queriesFile, eval.ReadQueries); err != nil {
			return d, err
		}
		if d.qrels, err = readWith(a.qrelsFile, eval.ReadQrels); err != nil {
			return d, err
		}
	}
	if a.sample > 0 {
		papers = eval.Sample(papers, a.sampleFrom, a.sample, d.qrels)
	}
	if a.titles {
		d.queries, d.qrels = eval.TitleQueries(papers)
	}
	if a.noTitles {
		for i := range papers {
			papers[i].Title = ""
		}
	}
	d.papers = papers
	d.texts = make(map[string]string, len(papers))
	for _, p := range papers {
		d.texts[p.ID] = p.Text()
	}
	return d, nil
}

// evalIndex is eval's fresh index: its engine, what it is and how to
// close it.
type evalIndex struct {
	eng          *search.Engine
	model, store string
	close        func()
}

// indexForEval indexes papers into a fresh store, the embeddings cached in
// the default embedding cache, reporting progress on stderr.
func indexForEval(ctx context.Context, cfg Config, log *slog.Logger, a evalArgs, papers []papersearch.Paper, stderr io.Writer) (evalIndex, error) {
	cached, _, cache, err := cachedEmbedder(ctx, cfg, log)
	if err != nil {
		return evalIndex{}, err
	}
	closeCache, cachePath := cache.close, cache.path
	store, cleanup, err := evalStore(ctx, cfg, log, cached.Info(), papers)
	if err != nil {
		closeCache()
		return evalIndex{}, err
	}
	ix := evalIndex{model: cached.Info().Name, store: store.Kind(), close: func() { cleanup(); closeCache() }}
	opts := search.Options{Logger: log, RawQueries: a.rawQueries}
	if a.denseWeight > 0 {
		f := search.DefaultFusion
		f.DenseWeight = a.denseWeight
		opts.Fusion = &f
	}
	if ix.eng, err = search.NewEngine(store, cached, opts); err != nil {
		ix.close()
		return evalIndex{}, err
	}
	where := "embeddings cached in " + cachePath
	if cachePath == "" {
		where = "no embedding cache"
	}
	fmt.Fprintf(stderr, "eval: indexing %d documents into a fresh %s index (%s)\n", len(papers), store.Kind(), where)
	last := time.Now()
	sum, err := catalog.New(ix.eng, catalog.Options{Logger: log, Batch: 64}).Ingest(ctx, papers, func(p catalog.IngestProgress) {
		if time.Since(last) > 5*time.Second || p.Done == p.Total {
			last = time.Now()
			fmt.Fprintf(stderr, "eval: %d/%d documents indexed (%.1f/s, eta %s)\n", p.Done, p.Total,
				float64(p.Done)/p.Elapsed.Seconds(), p.ETA().Round(time.Second))
		}
	})
	if err != nil {
		ix.close()
		return evalIndex{}, err
	}
	fmt.Fprintf(stderr, "eval: indexed in %s\n", sum.Took.Round(time.Millisecond))
	return ix, nil
}

// runs evaluates the queries in each mode a asks for (and, with
// --fusion-sweep, hybrid under each fusion of the sweep), returning the
// default hybrid run apart too.
func (a evalArgs) runs(ctx context.Context, eng *search.Engine, d evalData) (eval.Run, []eval.Run, error) {
	hybrid, err := eval.Evaluate(ctx, eng, d.queries, d.qrels, d.texts, search.Hybrid)
	if err != nil {
		return hybrid, nil, err
	}
	var runs []eval.Run
	for _, m := range a.modes {
		if m == search.Hybrid {
			runs = append(runs, hybrid)
			continue
		}
		r, err := eval.Evaluate(ctx, eng, d.queries, d.qrels, d.texts, m)
		if err != nil {
			return hybrid, nil, err
		}
		runs = append(runs, r)
	}
	if !a.sweep {
		return hybrid, runs, nil
	}
	for _, f := range fusionSweep() {
		r, err := eval.Evaluate(ctx, eng.WithFusion(f), d.queries, d.qrels, d.texts, search.Hybrid)
		if err != nil {
			return hybrid, nil, err
		}
		runs = append(runs, r)
	}
	return hybrid, runs, nil
}

// fusionSweep is --fusion-sweep's fusions: RRF, margin at three dense
// weights and four gains, and each weighted method at dense weights 0.1 to
// 0.9 in steps of 0.05.
func fusionSweep() []search.Fusion {
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
	return fusions
}

// writeFeatures writes each query's second-stage features to the file
// named.
func writeFeatures(ctx context.Context, eng *search.Engine, d evalData, name string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	err = eval.Features(ctx, eng, d.queries, d.qrels, d.texts, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// evalStore is a fresh, empty store for an evaluation and its cleanup: a
// new Qdrant collection (BM25 normalised by this corpus's average length)
// when Qdrant is configured, else an embedded store in a temporary folder.
func evalStore(ctx context.Context, cfg Config, log *slog.Logger, model embed.ModelInfo, papers []papersearch.Paper) (storage.Store, func(), error) {
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
