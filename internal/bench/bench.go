// Package bench measures papersearch end to end, as `papersearch bench`
// reports it: ingest through the engine into a fresh store, then search,
// similar and get requests from concurrent clients to the real HTTP server
// on loopback; or, with Synthetic, dense retrieval and reopening of the
// embedded store at scale.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"sync/atomic"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/drive"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/storage"
)

// Options says what Run measures.
type Options struct {
	Papers []papersearch.Paper
	// Store is fresh and empty; Run fills it. StoreKind names it in the
	// report; Dir, if set, is the directory whose size the report gives.
	Store     storage.Store
	StoreKind string
	Dir       string
	// Model embeds queries, and papers unless HashVectors is set: then
	// papers get deterministic random vectors (hashvec) and the bench
	// measures the store, not the model.
	Model       embed.Embedder
	HashVectors bool
	Clients     int
	Duration    time.Duration // of each kind of request
	// MemProfile, if set, receives a heap profile (pprof) taken once the
	// requests have ended, after a collection.
	MemProfile io.Writer
	// CPUProfile, if set, receives a CPU profile (pprof) of the serving
	// phase: every kind of request driven, the server and its clients.
	CPUProfile io.Writer
	// Kinds, if set, are the only kinds of request driven (see Kinds).
	Kinds []string
	// Settle, if set, is called after ingest and waits until the store is
	// as a running service meets it (Qdrant: its segments optimized).
	Settle func(ctx context.Context) error
	// Progress receives a line per step; Logger the engine's logs.
	Progress io.Writer
	Logger   *slog.Logger
}

// Latency is one kind of request's measurement.
type Latency struct {
	P50    float64 `json:"p50_ms"`
	P95    float64 `json:"p95_ms"`
	P99    float64 `json:"p99_ms"`
	RPS    float64 `json:"rps"`
	Errors int     `json:"errors"`
}

// Ingest is how fast a bench stored its papers: embedding and storing,
// each timed apart.
type Ingest struct {
	EmbedPerS float64 `json:"embed_per_s"`
	StorePerS float64 `json:"store_per_s"`
}

// Report is what a bench measured; Print writes it.
type Report struct {
	Papers       int     `json:"papers"`
	Store        string  `json:"store"`
	Vectors      string  `json:"vectors"`
	Clients      int     `json:"clients"`
	Ingest       Ingest  `json:"ingest"`
	QueryEmbedMS float64 `json:"query_embed_ms"`
	// ImportPerS is the rate an import embedded and stored papers at
	// while search-during-import was driven.
	ImportPerS float64            `json:"import_per_s"`
	Queries    map[string]Latency `json:"queries"`
	RSSBytes   int64              `json:"rss_bytes"`
	// ServeRSSBytes is the peak RSS while the requests were driven, the
	// ingest's memory returned to the system first; LiveHeapBytes the
	// heap in use after a collection once they ended: the store's index,
	// the models' weights, the bench's own papers.
	ServeRSSBytes int64 `json:"serve_rss_bytes"`
	LiveHeapBytes int64 `json:"live_heap_bytes"`
	// ServeAnonBytes and ServeFileBytes are the most anonymous and
	// file-backed memory resident at once while serving (sampled every
	// 50 ms): the heap and the runtime's, and mapped files; ServeLiveBytes
	// the largest live heap a collection found meanwhile.
	ServeAnonBytes int64 `json:"serve_anon_bytes"`
	ServeFileBytes int64 `json:"serve_file_bytes"`
	ServeLiveBytes int64 `json:"serve_live_heap_bytes"`
	// Recall is the store's dense top 10 for papers' own vectors against
	// an exact scan.
	Recall        *DenseRecall `json:"dense_recall,omitempty"`
	DiskBytes     int64        `json:"disk_bytes"`
	BytesPerPaper float64      `json:"bytes_per_paper"`
	Dense         *DenseReport `json:"dense,omitempty"`
	// Encoders is each local model's arithmetic and kernel, and what was
	// measured to choose them.
	Encoders map[string]embed.Choice `json:"encoders,omitempty"`
}

// Kinds are the requests Run drives, in the order it reports them.
// search-during-import is last: the papers it imports stay in the store.
func Kinds() []string {
	return []string{"search", "search-explained", "similar", "aspect", "get", "recommend", "search-during-import"}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// timed returns e with the time it spends embedding added to spent. It
// embeds texts in parts, in one pass, exactly when e does: hiding that
// would make the engine embed every sentence of a paper apart and the
// rate measured that of a different pipeline from the service's.
func timed(e embed.Embedder, spent *atomic.Int64) embed.Embedder {
	t := timedEmbedder{e, spent}
	if pe, ok := embed.AsPartEmbedder(e); ok {
		return timedParts{t, pe}
	}
	return t
}

// timedEmbedder adds the time spent in Embed to spent.
type timedEmbedder struct {
	embed.Embedder
	spent *atomic.Int64
}

func (t timedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	defer t.since(time.Now())
	return t.Embedder.Embed(ctx, texts)
}

func (t timedEmbedder) since(start time.Time) { t.spent.Add(int64(time.Since(start))) }

// timedParts is a timedEmbedder of a PartEmbedder.
type timedParts struct {
	timedEmbedder
	parts embed.PartEmbedder
}

func (t timedParts) EmbedParts(ctx context.Context, texts [][]string) ([][]float32, [][][]float32, error) {
	defer t.since(time.Now())
	return t.parts.EmbedParts(ctx, texts)
}

// ingestBatch is the papers ingested per batch: larger than the service's
// default, so storing is measured in the batches a bulk load would use.
const ingestBatch = 256

// Run ingests opts.Papers into opts.Store through the engine, then drives
// each kind of request over HTTP for opts.Duration.
func Run(ctx context.Context, opts Options) (Report, error) {
	if len(opts.Papers) == 0 {
		return Report{}, errors.New("bench: no papers")
	}
	vectors := "model"
	if opts.HashVectors {
		vectors = "hash"
	}
	rep := Report{Papers: len(opts.Papers), Store: opts.StoreKind, Vectors: vectors, Clients: opts.Clients, Queries: map[string]Latency{},
		Encoders: embed.Choices(opts.Model)}
	var err error
	if rep.Ingest, err = ingest(ctx, opts, vectors); err != nil {
		return rep, err
	}
	if rep.QueryEmbedMS, err = queryEmbedMS(ctx, opts.Model); err != nil {
		return rep, err
	}
	rep.RSSBytes = PeakRSS()
	debug.FreeOSMemory()
	resetPeakRSS()
	sampled := memorySampler()
	if err := serve(ctx, opts, &rep); err != nil {
		sampled()
		return rep, err
	}
	m := sampled()
	rep.ServeAnonBytes, rep.ServeFileBytes, rep.ServeLiveBytes = m.anon, m.file, m.live
	rep.RSSBytes, rep.ServeRSSBytes = max(rep.RSSBytes, PeakRSS()), PeakRSS()
	runtime.GC()
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	rep.LiveHeapBytes = int64(mem.HeapAlloc)
	if opts.MemProfile != nil {
		if err := pprof.WriteHeapProfile(opts.MemProfile); err != nil {
			return rep, fmt.Errorf("bench: heap profile: %w", err)
		}
	}
	opts.progress("the dense top 10 of %d papers' own vectors against an exact scan", min(recallQueries, len(opts.Papers)))
	if rep.Recall, err = denseRecall(ctx, opts.Store, opts.Papers); err != nil {
		return rep, err
	}
	if opts.Dir != "" {
		rep.DiskBytes = DirSize(opts.Dir)
		rep.BytesPerPaper = float64(rep.DiskBytes) / float64(len(opts.Papers))
	}
	return rep, nil
}

// progress reports a step of the run on opts.Progress, if any.
func (opts Options) progress(format string, args ...any) {
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "bench: "+format+"\n", args...)
	}
}

// ingest stores opts.Papers into the fresh store, embedding timed apart
// from the rest (with hash vectors, the model's rate is measured on a
// sample).
func ingest(ctx context.Context, opts Options, vectors string) (Ingest, error) {
	var out Ingest
	var docEmbedder embed.Embedder = opts.Model
	if opts.HashVectors {
		docEmbedder = hashvec.Embedder{Model: opts.Model.Info()}
	}
	var embedTime atomic.Int64
	eng, err := search.NewEngine(opts.Store, timed(docEmbedder, &embedTime), search.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return out, err
	}
	ingester := catalog.New(eng, catalog.Options{Batch: ingestBatch})
	opts.progress("ingesting %d papers into a fresh %s store (%s vectors)", len(opts.Papers), opts.StoreKind, vectors)
	last := time.Now()
	sum, err := ingester.Ingest(ctx, opts.Papers, func(p catalog.IngestProgress) {
		if time.Since(last) > 5*time.Second {
			last = time.Now()
			opts.progress("%d/%d papers stored", p.Done, p.Total)
		}
	})
	if err != nil {
		return out, err
	}
	if opts.Settle != nil {
		t := time.Now()
		opts.progress("waiting for the store to settle")
		if err := opts.Settle(ctx); err != nil {
			return out, err
		}
		opts.progress("settled after %s", time.Since(t).Round(time.Second))
	}
	embedded := time.Duration(embedTime.Load())
	out.StorePerS = float64(len(opts.Papers)) / (sum.Took - embedded).Seconds()
	if !opts.HashVectors {
		out.EmbedPerS = float64(len(opts.Papers)) / embedded.Seconds()
		return out, nil
	}
	sample := opts.Papers[:min(64, len(opts.Papers))]
	texts := make([]string, len(sample))
	for i, p := range sample {
		texts[i] = p.Text()
	}
	t := time.Now()
	if _, err := embed.Instructed(opts.Model, embed.Document).Embed(ctx, texts); err != nil {
		return out, err
	}
	out.EmbedPerS = float64(len(sample)) / time.Since(t).Seconds()
	return out, nil
}

// queryEmbedMS is the median time model takes to embed one short query
// alone, over 100 queries.
func queryEmbedMS(ctx context.Context, model embed.Embedder) (float64, error) {
	asQueries := embed.Instructed(model, embed.Query)
	var lat []time.Duration
	for i := range 100 {
		t := time.Now()
		if _, err := asQueries.Embed(ctx, []string{fmt.Sprintf("graph neural networks for molecules %d", i)}); err != nil {
			return 0, err
		}
		lat = append(lat, time.Since(t))
	}
	slices.Sort(lat)
	return ms(drive.Percentile(lat, 50)), nil
}

// serve answers the store over real HTTP on loopback and drives each kind
// of request at it for opts.Duration with opts.Clients clients.
func serve(ctx context.Context, opts Options, rep *Report) error {
	eng, err := search.NewEngine(opts.Store, opts.Model, search.Options{Logger: opts.Logger})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	cat := catalog.New(eng, catalog.Options{Logger: opts.Logger})
	srv := &http.Server{Handler: api.New(eng, cat, api.Options{}), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	if opts.CPUProfile != nil {
		if err := pprof.StartCPUProfile(opts.CPUProfile); err != nil {
			return fmt.Errorf("bench: CPU profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	for _, kind := range Kinds() {
		if len(opts.Kinds) > 0 && !slices.Contains(opts.Kinds, kind) {
			continue
		}
		opts.progress("%s for %s with %d clients", kind, opts.Duration, opts.Clients)
		var imported func() (float64, error)
		if kind == "recommend" {
			if err := benchCollections(ctx, eng, cat, opts.Papers); err != nil {
				return err
			}
		}
		if kind == "search-during-import" {
			imported = importCopies(ctx, cat, opts.Papers)
		}
		res := drive.Run(ctx, opts.Clients, opts.Duration, requests(kind, "http://"+ln.Addr().String(), opts.Papers))
		rep.Queries[kind] = Latency{P50: ms(res.P50), P95: ms(res.P95), P99: ms(res.P99), RPS: res.RPS, Errors: res.Errors}
		if imported != nil {
			if rep.ImportPerS, err = imported(); err != nil {
				return err
			}
		}
	}
	return nil
}
