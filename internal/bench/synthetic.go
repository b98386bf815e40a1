package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/drive"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/search/sqlite"
	"github.com/papersearch/papersearch/search/storage"
)

// DenseReport is the store-level dense retrieval measurement of Synthetic:
// latency of top-10 on one goroutine and recall against an exact scan.
type DenseReport struct {
	Vectors  int     `json:"vectors"`
	P50      float64 `json:"p50_ms"`
	P99      float64 `json:"p99_ms"`
	Recall10 float64 `json:"recall@10"`
	// HeapBytesPerPaper is the live Go heap after a collection over the
	// vectors: the store's in-memory cost of one paper.
	HeapBytesPerPaper float64 `json:"heap_bytes_per_paper"`
	// Open measures reopening the store.
	Open *OpenReport `json:"open,omitempty"`
}

// OpenReport is the cost of opening a store: how long, the process's peak
// RSS while opening (and its RSS before), and the live heap after.
type OpenReport struct {
	Seconds        float64 `json:"seconds"`
	PeakRSSBytes   int64   `json:"peak_rss_bytes"`
	RSSBeforeBytes int64   `json:"rss_before_bytes"`
	LiveHeapBytes  int64   `json:"live_heap_bytes"`
}

// Synthetic fills an embedded store in a temporary directory with n
// synthetic papers with hash vectors, measures dense top-10 retrieval on
// one goroutine with its recall@10 against an exact scan, then closes and
// reopens the store and measures the opening.
func Synthetic(ctx context.Context, n int, progress io.Writer) (Report, error) {
	const dim = 384
	model := embed.ModelInfo{Name: "synthetic-384", Dim: dim}
	dir, err := os.MkdirTemp("", "papersearch-bench-")
	if err != nil {
		return Report{}, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "bench.db")
	store, err := sqlite.Open(ctx, path, model)
	if err != nil {
		return Report{}, err
	}
	defer func() {
		if store != nil {
			store.Close()
		}
	}()
	if err := fillSynthetic(ctx, store, n, dim, progress); err != nil {
		return Report{}, err
	}
	dense, err := nearestSynthetic(ctx, store, n, dim, progress)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Papers: n, Store: "embedded", Vectors: "synthetic", Queries: map[string]Latency{}, Dense: dense}
	rep.RSSBytes = PeakRSS()
	rep.DiskBytes = DirSize(dir)
	rep.BytesPerPaper = float64(rep.DiskBytes) / float64(n)

	// Reopen the store in this process, its memory returned first, and
	// compare the peak while opening with the live heap afterwards.
	err = store.Close()
	store = nil
	if err != nil {
		return Report{}, err
	}
	debug.FreeOSMemory()
	resetPeakRSS()
	before := PeakRSS()
	t := time.Now()
	if store, err = sqlite.Open(ctx, path, model); err != nil {
		return Report{}, err
	}
	took := time.Since(t)
	peak := PeakRSS()
	runtime.GC()
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	rep.Dense.Open = &OpenReport{Seconds: took.Seconds(), PeakRSSBytes: peak, RSSBeforeBytes: before, LiveHeapBytes: int64(mem.HeapAlloc)}
	fmt.Fprintf(progress, "bench: reopened %d papers in %s\n", n, took.Round(time.Millisecond))
	return rep, nil
}

// syntheticID is the id of synthetic paper i; its vector is
// hashvec.Of(syntheticID(i), dim).
func syntheticID(i int) string { return "s" + strconv.Itoa(i) }

// fillSynthetic stores n synthetic papers with deterministic random
// vectors, 2,000 at a time.
func fillSynthetic(ctx context.Context, store *sqlite.Store, n, dim int, progress io.Writer) error {
	start, last := time.Now(), time.Now()
	for i := 0; i < n; i += 2000 {
		docs := make([]storage.Document, 0, 2000)
		for j := i; j < min(i+2000, n); j++ {
			docs = append(docs, storage.Document{Paper: papersearch.Paper{ID: syntheticID(j), Title: "synthetic paper", Abstract: "synthetic"},
				Vector: hashvec.Of(syntheticID(j), dim)})
		}
		if err := store.Upsert(ctx, docs); err != nil {
			return err
		}
		if time.Since(last) > 10*time.Second {
			last = time.Now()
			fmt.Fprintf(progress, "bench: %d/%d synthetic vectors stored (%.0f/s)\n", i+len(docs), n, float64(i+len(docs))/time.Since(start).Seconds())
		}
	}
	fmt.Fprintf(progress, "bench: %d vectors stored in %s\n", n, time.Since(start).Round(time.Second))
	return nil
}

// nearestSynthetic measures 200 top-10 queries of random vectors against
// the n synthetic papers: their latency, their recall against an exact
// scan, and the heap per paper.
func nearestSynthetic(ctx context.Context, store *sqlite.Store, n, dim int, progress io.Writer) (*DenseReport, error) {
	const k, queries = 10, 200
	fmt.Fprintf(progress, "bench: measuring %d top-%d queries\n", queries, k)
	qs := make([][]float32, queries)
	var lat []time.Duration
	got := make([][]storage.Candidate, queries)
	for q := range queries {
		qs[q] = hashvec.Of("query "+strconv.Itoa(q), dim)
		t := time.Now()
		var err error
		if got[q], err = store.Nearest(ctx, qs[q], k, papersearch.Filter{}); err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(t))
	}
	exact := exactTopK(ctx, qs, n, k, func(i int) (string, []float32) { return syntheticID(i), hashvec.Of(syntheticID(i), dim) })
	slices.Sort(lat)
	runtime.GC()
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	return &DenseReport{Vectors: n, P50: ms(drive.Percentile(lat, 50)), P99: ms(drive.Percentile(lat, 99)),
		Recall10: recallAt(got, exact), HeapBytesPerPaper: float64(mem.HeapAlloc) / float64(n)}, nil
}

// exactTopK returns, for each query, the k of n vectors with the largest
// dot product, found by a full scan: one pass over the vectors, each
// made once by vector(i), against every query (a nil vector, a paper not
// stored, is passed over).
func exactTopK(ctx context.Context, queries [][]float32, n, k int, vector func(i int) (string, []float32)) [][]storage.Candidate {
	tops := make([][]storage.Candidate, len(queries))
	for i := 0; i < n && ctx.Err() == nil; i++ {
		id, v := vector(i)
		if v == nil {
			continue
		}
		for q, qv := range queries {
			c := storage.Candidate{ID: id, Score: embed.Dot(qv, v)}
			t := tops[q]
			if len(t) == k && c.Score <= t[k-1].Score {
				continue
			}
			at, _ := slices.BinarySearchFunc(t, c, func(a, b storage.Candidate) int {
				switch {
				case a.Score > b.Score:
					return -1
				case a.Score < b.Score:
					return 1
				}
				return 0
			})
			t = slices.Insert(t, at, c)
			tops[q] = t[:min(len(t), k)]
		}
	}
	return tops
}
