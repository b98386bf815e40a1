package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/seeds"
)

// defaultBenchCorpus is the shared ML paper corpus, when this checkout has
// ../shared beside it.
const defaultBenchCorpus = "../shared/data/papers/ml-papers.jsonl.gz"

type latencyJSON struct {
	P50    float64 `json:"p50_ms"`
	P95    float64 `json:"p95_ms"`
	P99    float64 `json:"p99_ms"`
	RPS    float64 `json:"rps"`
	Errors int     `json:"errors"`
}

type benchReport struct {
	Papers  int    `json:"papers"`
	Store   string `json:"store"`
	Vectors string `json:"vectors"`
	Clients int    `json:"clients"`
	Ingest  struct {
		EmbedPerS float64 `json:"embed_per_s"`
		StorePerS float64 `json:"store_per_s"`
	} `json:"ingest"`
	QueryEmbedMS  float64                `json:"query_embed_ms"`
	Queries       map[string]latencyJSON `json:"queries"`
	RSSBytes      int64                  `json:"rss_bytes"`
	DiskBytes     int64                  `json:"disk_bytes"`
	BytesPerPaper float64                `json:"bytes_per_paper"`
	Dense         *denseReport           `json:"dense,omitempty"`
}

// denseReport is the store-level dense retrieval measurement of
// --synthetic: latency of top-10 on one goroutine and recall against exact.
type denseReport struct {
	Vectors  int     `json:"vectors"`
	P50      float64 `json:"p50_ms"`
	P99      float64 `json:"p99_ms"`
	Recall10 float64 `json:"recall@10"`
	// HeapBytesPerPaper is the live Go heap after a collection over the
	// vectors: the store's in-memory cost of one paper.
	HeapBytesPerPaper float64 `json:"heap_bytes_per_paper"`
	// Open measures reopening the store.
	Open *openReport `json:"open,omitempty"`
}

// openReport is the cost of opening a store: how long, the process's peak
// RSS while opening (and its RSS before), and the live heap after.
type openReport struct {
	Seconds        float64 `json:"seconds"`
	PeakRSSBytes   int64   `json:"peak_rss_bytes"`
	RSSBeforeBytes int64   `json:"rss_before_bytes"`
	LiveHeapBytes  int64   `json:"live_heap_bytes"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// benchCmd measures ingest, latency and throughput end to end: a fresh
// store, the real HTTP server, concurrent clients.
func benchCmd(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	papersFile := fs.String("papers", "", "corpus (seed text or JSONL, .gz too); default "+defaultBenchCorpus+" when present, else the seeds")
	limit := fs.Int("limit", 0, "use only the first N papers (0: all)")
	clients := fs.Int("clients", 1, "concurrent HTTP clients")
	duration := fs.Duration("duration", 10*time.Second, "how long to drive each kind of request")
	storeKind := fs.String("store", "embedded", "embedded or qdrant (PAPERSEARCH_QDRANT_URL)")
	vectors := fs.String("vectors", "hash", "model (embed every paper) or hash (deterministic random vectors; free-text queries still use the model)")
	synthetic := fs.Int("synthetic", 0, "instead, measure dense top-10 over N synthetic 384-d vectors in the embedded store (latency, recall@10)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return usageError{"bench: bad arguments; see papersearch bench -h"}
	}
	if *storeKind != "embedded" && *storeKind != "qdrant" || *vectors != "model" && *vectors != "hash" || *clients < 1 {
		return usageError{"bench: --store is embedded or qdrant, --vectors model or hash, --clients at least 1"}
	}
	if *synthetic > 0 {
		return benchSynthetic(ctx, *synthetic, *asJSON, stdout, stderr)
	}
	model, err := embed.OpenLocal(cfg.Model, cfg.localOptions())
	if err != nil {
		return err
	}
	papers, err := benchCorpus(*papersFile, *limit)
	if err != nil {
		return err
	}
	rep := benchReport{Papers: len(papers), Store: *storeKind, Vectors: *vectors, Clients: *clients, Queries: map[string]latencyJSON{}}

	// A fresh store.
	dir, err := os.MkdirTemp("", "papersearch-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var store search.Store
	var qd *search.Qdrant // the Qdrant store, if that is the one
	if *storeKind == "qdrant" {
		if cfg.QdrantURL == "" {
			return usageError{"bench --store qdrant needs PAPERSEARCH_QDRANT_URL"}
		}
		suffix := make([]byte, 4)
		rand.Read(suffix)
		q, err := search.OpenQdrant(ctx, cfg.qdrantConfig("bench_"+hex.EncodeToString(suffix), log), model.Info())
		if err != nil {
			return err
		}
		defer func() { q.Drop(context.Background()); q.Close() }()
		store, qd = q, q
	} else {
		s, err := search.OpenSQLite(ctx, filepath.Join(dir, "bench.db"), model.Info())
		if err != nil {
			return err
		}
		defer s.Close()
		store = s
	}

	// Ingest, timing embedding and storing apart.
	fmt.Fprintf(stderr, "bench: ingesting %d papers into a fresh %s store (%s vectors)\n", len(papers), *storeKind, *vectors)
	var embedTime, storeTime time.Duration
	sample := papers[:min(64, len(papers))]
	texts := make([]string, len(sample))
	for i, p := range sample {
		texts[i] = p.Text()
	}
	asDocs, asQueries := embed.Instructed(model, embed.Document), embed.Instructed(model, embed.Query)
	t := time.Now()
	if _, err := asDocs.Embed(ctx, texts); err != nil {
		return err
	}
	sampleTime := time.Since(t)
	last := time.Now()
	for i := 0; i < len(papers); i += 256 {
		batch := papers[i:min(i+256, len(papers))]
		docs := make([]search.Document, len(batch))
		var vecs [][]float32
		t := time.Now()
		if *vectors == "model" {
			bt := make([]string, len(batch))
			for j, p := range batch {
				bt[j] = p.Text()
			}
			if vecs, err = asDocs.Embed(ctx, bt); err != nil {
				return err
			}
		} else {
			for _, p := range batch {
				vecs = append(vecs, embed.HashVector(p.ID, model.Info().Dim))
			}
		}
		embedTime += time.Since(t)
		for j, p := range batch {
			fp := search.FingerprintOf(p)
			docs[j] = search.Document{Paper: p, Vector: vecs[j], TextHash: fp.TextHash, PaperHash: fp.PaperHash}
		}
		t = time.Now()
		if err := store.Upsert(ctx, docs); err != nil {
			return err
		}
		storeTime += time.Since(t)
		if time.Since(last) > 5*time.Second {
			last = time.Now()
			fmt.Fprintf(stderr, "bench: %d/%d papers stored\n", i+len(batch), len(papers))
		}
	}
	if err := store.RefreshLexical(ctx); err != nil {
		return err
	}
	if qd != nil {
		// Measure Qdrant as a service meets it, its segments optimized.
		t := time.Now()
		fmt.Fprintf(stderr, "bench: waiting for Qdrant to optimize the collection\n")
		if err := qd.WaitOptimized(ctx); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "bench: optimized after %s\n", time.Since(t).Round(time.Second))
	}
	if *vectors == "model" {
		rep.Ingest.EmbedPerS = float64(len(papers)) / embedTime.Seconds()
	} else {
		rep.Ingest.EmbedPerS = float64(len(sample)) / sampleTime.Seconds() // the model, on a sample
	}
	rep.Ingest.StorePerS = float64(len(papers)) / storeTime.Seconds()

	// One short query, embedded alone.
	var qlat []time.Duration
	for i := range 20 {
		t := time.Now()
		if _, err := asQueries.Embed(ctx, []string{fmt.Sprintf("graph neural networks for molecules %d", i)}); err != nil {
			return err
		}
		qlat = append(qlat, time.Since(t))
	}
	rep.QueryEmbedMS = ms(api.Percentile(sortDurations(qlat), 50))

	// Serve over real HTTP on loopback.
	eng, err := search.NewEngine(store, model, search.Options{Logger: log})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: api.New(eng, api.Options{}), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	r := mrand.New(mrand.NewPCG(1, 2))
	order := r.Perm(len(papers))
	pick := func(n int) papersearch.Paper { return papers[order[n%len(order)]] }
	get := func(c *http.Client, req *http.Request) error {
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	kinds := []struct {
		name string
		do   func(ctx context.Context, c *http.Client, n int) error
	}{
		{"search", func(ctx context.Context, c *http.Client, n int) error {
			// A different question each time, so the query cache stays cold.
			body, _ := json.Marshal(map[string]any{"query": pick(n).Title + " " + strconv.Itoa(n), "limit": 10})
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/search", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			return get(c, req)
		}},
		{"similar", func(ctx context.Context, c *http.Client, n int) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/papers/"+url.PathEscape(pick(n).ID)+"/similar?limit=10", nil)
			return get(c, req)
		}},
		{"get", func(ctx context.Context, c *http.Client, n int) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/papers/"+url.PathEscape(pick(n).ID), nil)
			return get(c, req)
		}},
	}
	for _, k := range kinds {
		fmt.Fprintf(stderr, "bench: %s for %s with %d clients\n", k.name, *duration, *clients)
		res := api.Drive(ctx, *clients, *duration, k.do)
		rep.Queries[k.name] = latencyJSON{P50: ms(res.P50), P95: ms(res.P95), P99: ms(res.P99), RPS: res.RPS, Errors: res.Errors}
	}
	rep.RSSBytes = peakRSS()
	rep.DiskBytes = dirSize(dir)
	if *storeKind == "embedded" && len(papers) > 0 {
		rep.BytesPerPaper = float64(rep.DiskBytes) / float64(len(papers))
	}
	return printBench(stdout, rep, *asJSON)
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

// benchSynthetic fills an embedded store with n synthetic papers with hash
// vectors and measures dense top-10 retrieval on one goroutine, with its
// recall@10 against an exact scan.
func benchSynthetic(ctx context.Context, n int, asJSON bool, stdout, stderr io.Writer) error {
	const dim, k, queries = 384, 10, 200
	model := embed.ModelInfo{Name: "synthetic-384", Dim: dim}
	dir, err := os.MkdirTemp("", "papersearch-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	store, err := search.OpenSQLite(ctx, filepath.Join(dir, "bench.db"), model)
	if err != nil {
		return err
	}
	defer func() {
		if store != nil {
			store.Close()
		}
	}()
	start, last := time.Now(), time.Now()
	for i := 0; i < n; i += 2000 {
		docs := make([]search.Document, 0, 2000)
		for j := i; j < min(i+2000, n); j++ {
			id := "s" + strconv.Itoa(j)
			docs = append(docs, search.Document{Paper: papersearch.Paper{ID: id, Title: "synthetic paper", Abstract: "synthetic"},
				Vector: embed.HashVector(id, dim)})
		}
		if err := store.Upsert(ctx, docs); err != nil {
			return err
		}
		if time.Since(last) > 10*time.Second {
			last = time.Now()
			fmt.Fprintf(stderr, "bench: %d/%d synthetic vectors stored (%.0f/s)\n", i+len(docs), n, float64(i+len(docs))/time.Since(start).Seconds())
		}
	}
	fmt.Fprintf(stderr, "bench: %d vectors stored in %s; measuring %d top-%d queries\n", n, time.Since(start).Round(time.Second), queries, k)
	var lat []time.Duration
	var found int
	for q := range queries {
		v := embed.HashVector("query "+strconv.Itoa(q), dim)
		t := time.Now()
		got, err := store.Nearest(ctx, v, k, papersearch.Filter{})
		if err != nil {
			return err
		}
		lat = append(lat, time.Since(t))
		exact, err := store.NearestExact(ctx, v, k)
		if err != nil {
			return err
		}
		want := map[string]bool{}
		for _, c := range exact {
			want[c.ID] = true
		}
		for _, c := range got {
			if want[c.ID] {
				found++
			}
		}
	}
	sortDurations(lat)
	runtime.GC()
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	rep := benchReport{Papers: n, Store: "embedded", Vectors: "synthetic", Queries: map[string]latencyJSON{},
		Dense: &denseReport{Vectors: n, P50: ms(api.Percentile(lat, 50)), P99: ms(api.Percentile(lat, 99)),
			Recall10: float64(found) / float64(queries*k), HeapBytesPerPaper: float64(mem.HeapAlloc) / float64(n)}}
	rep.RSSBytes = peakRSS()
	rep.DiskBytes = dirSize(dir)
	rep.BytesPerPaper = float64(rep.DiskBytes) / float64(n)

	// Reopen the store in this process, its memory returned first, and
	// compare the peak while opening with the live heap afterwards.
	err = store.Close()
	store = nil
	if err != nil {
		return err
	}
	debug.FreeOSMemory()
	resetPeakRSS()
	before := peakRSS()
	t := time.Now()
	if store, err = search.OpenSQLite(ctx, filepath.Join(dir, "bench.db"), model); err != nil {
		return err
	}
	took := time.Since(t)
	peak := peakRSS()
	runtime.GC()
	runtime.ReadMemStats(&mem)
	rep.Dense.Open = &openReport{Seconds: took.Seconds(), PeakRSSBytes: peak, RSSBeforeBytes: before, LiveHeapBytes: int64(mem.HeapAlloc)}
	fmt.Fprintf(stderr, "bench: reopened %d papers in %s\n", n, took.Round(time.Millisecond))
	return printBench(stdout, rep, asJSON)
}

// resetPeakRSS makes the kernel's peak RSS (VmHWM) the current RSS, where
// Linux allows it.
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func sortDurations(d []time.Duration) []time.Duration {
	for i := 1; i < len(d); i++ {
		for j := i; j > 0 && d[j] < d[j-1]; j-- {
			d[j], d[j-1] = d[j-1], d[j]
		}
	}
	return d
}

// peakRSS is the process's peak resident set size (VmHWM), or 0 where
// /proc is not available.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func dirSize(dir string) int64 {
	var total int64
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			total += info.Size()
		}
		return nil
	})
	return total
}

func printBench(w io.Writer, rep benchReport, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if rep.Dense != nil {
		fmt.Fprintf(tw, "dense top-10 over %d vectors (GOMAXPROCS %d)\tp50 %.2f ms\tp99 %.2f ms\trecall@10 %.4f\n",
			rep.Dense.Vectors, runtime.GOMAXPROCS(0), rep.Dense.P50, rep.Dense.P99, rep.Dense.Recall10)
		fmt.Fprintf(tw, "memory\t%.0f heap bytes per paper\n", rep.Dense.HeapBytesPerPaper)
		if o := rep.Dense.Open; o != nil {
			fmt.Fprintf(tw, "reopening the store\t%.1f s\tpeak RSS %.0f MiB (%.0f before)\tlive heap %.0f MiB\tpeak/live %.2f\n",
				o.Seconds, float64(o.PeakRSSBytes)/(1<<20), float64(o.RSSBeforeBytes)/(1<<20), float64(o.LiveHeapBytes)/(1<<20),
				float64(o.PeakRSSBytes)/float64(o.LiveHeapBytes))
		}
	} else {
		fmt.Fprintf(tw, "papers\t%d (%s store, %s vectors)\n", rep.Papers, rep.Store, rep.Vectors)
		fmt.Fprintf(tw, "ingest\tembed %.1f papers/s\tstore %.0f papers/s\n", rep.Ingest.EmbedPerS, rep.Ingest.StorePerS)
		fmt.Fprintf(tw, "one short query embedded\t%.1f ms (p50)\n", rep.QueryEmbedMS)
		fmt.Fprintf(tw, "REQUEST (%d clients)\tP50 ms\tP95 ms\tP99 ms\tREQ/S\tERRORS\n", rep.Clients)
		for _, k := range []string{"search", "similar", "get"} {
			q := rep.Queries[k]
			fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%.0f\t%d\n", k, q.P50, q.P95, q.P99, q.RPS, q.Errors)
		}
	}
	fmt.Fprintf(tw, "peak RSS\t%.0f MiB\n", float64(rep.RSSBytes)/(1<<20))
	if rep.DiskBytes > 0 {
		fmt.Fprintf(tw, "store on disk\t%.1f MiB (%.0f bytes per paper)\n", float64(rep.DiskBytes)/(1<<20), rep.BytesPerPaper)
	}
	return tw.Flush()
}
