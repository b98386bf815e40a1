package bench

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// resetPeakRSS makes the kernel's peak RSS (VmHWM) the current RSS, where
// Linux allows it.
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// PeakRSS is the process's peak resident set size (VmHWM), or 0 where
// /proc is not available.
func PeakRSS() int64 { return status("VmHWM") }

// status is a size /proc/self/status reports (VmHWM, RssAnon, RssFile),
// in bytes; 0 where /proc is not available.
func status(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field+":" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// memorySample is the most memory of each kind seen at once.
type memorySample struct {
	anon, file, live int64
}

// memorySampler records, every 50 ms until stop, the most anonymous
// memory (the heap, stacks, the runtime's own) and file-backed memory
// (mapped files: the store's file, the binary's pages) resident at once,
// and the largest live heap a collection found (runtime/metrics
// /gc/heap/live:bytes).
func memorySampler() (stop func() memorySample) {
	done := make(chan struct{})
	var m memorySample
	finished := make(chan struct{})
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	go func() {
		defer close(finished)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(live)
			if live[0].Value.Kind() == metrics.KindUint64 {
				m.live = max(m.live, int64(live[0].Value.Uint64()))
			}
			m.anon, m.file = max(m.anon, status("RssAnon")), max(m.file, status("RssFile"))
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() memorySample {
		close(done)
		<-finished
		return m
	}
}

// DirSize is the total size of the files below dir.
func DirSize(dir string) int64 {
	var total int64
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			total += info.Size()
		}
		return nil
	})
	return total
}

// Print writes the report as text, or as JSON.
func (rep Report) Print(w io.Writer, asJSON bool) error {
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
		for _, name := range slices.Sorted(maps.Keys(rep.Encoders)) {
			c := rep.Encoders[name]
			fmt.Fprintf(tw, "encoder %s\t%s (%s kernel)", name, c.Precision, c.Kernel)
			if c.FFNOut != "" || c.FFNOutKernel != "" {
				fmt.Fprintf(tw, ", feed-forward outputs %s (%s)", cmp.Or(c.FFNOut, c.Precision), cmp.Or(c.FFNOutKernel, c.Kernel))
			}
			fmt.Fprintf(tw, ", attention %s\n", c.Attention)
			for _, k := range slices.Sorted(maps.Keys(c.Measured)) {
				fmt.Fprintf(tw, "\tmeasured %s\t%.0f GOP/s\n", k, c.Measured[k])
			}
		}
		fmt.Fprintf(tw, "ingest\tembed %.1f papers/s\tstore %.0f papers/s\n", rep.Ingest.EmbedPerS, rep.Ingest.StorePerS)
		fmt.Fprintf(tw, "one short query embedded\t%.1f ms (p50)\n", rep.QueryEmbedMS)
		fmt.Fprintf(tw, "REQUEST (%d clients)\tP50 ms\tP95 ms\tP99 ms\tREQ/S\tERRORS\n", rep.Clients)
		for _, k := range Kinds() {
			q, ok := rep.Queries[k]
			if !ok {
				continue // not driven (Options.Kinds)
			}
			fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%.0f\t%d\n", k, q.P50, q.P95, q.P99, q.RPS, q.Errors)
		}
		fmt.Fprintf(tw, "import during search-during-import\t%.1f papers/s\n", rep.ImportPerS)
		if r := rep.Recall; r != nil {
			fmt.Fprintf(tw, "dense top-10 of %d papers' own vectors, 1 client\tp50 %.2f ms\tp99 %.2f ms\trecall@10 %.4f against an exact scan\n", r.Queries, r.P50, r.P99, r.Recall10)
		}
	}
	fmt.Fprintf(tw, "peak RSS\t%.0f MiB\n", float64(rep.RSSBytes)/(1<<20))
	if rep.ServeRSSBytes > 0 {
		fmt.Fprintf(tw, "peak RSS serving\t%.0f MiB (anonymous %.0f, mapped files %.0f)\tlive heap %.0f MiB at most, %.0f after\tpeak/live %.2f\n",
			float64(rep.ServeRSSBytes)/(1<<20), float64(rep.ServeAnonBytes)/(1<<20), float64(rep.ServeFileBytes)/(1<<20),
			float64(rep.ServeLiveBytes)/(1<<20), float64(rep.LiveHeapBytes)/(1<<20), float64(rep.ServeRSSBytes)/float64(rep.ServeLiveBytes))
	}
	if rep.DiskBytes > 0 {
		fmt.Fprintf(tw, "store on disk\t%.1f MiB (%.0f bytes per paper)\n", float64(rep.DiskBytes)/(1<<20), rep.BytesPerPaper)
	}
	return tw.Flush()
}
