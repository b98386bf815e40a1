package atlas

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkMap lays out synthetic corpora as the service lays out its
// own: neighbours (exact up to exactLimit, NN-descent beyond), the layout
// and the clusters, over 768 dimensions (the default models' core)
// clustered as topics are. It reports each stage's seconds and the most
// heap in use. The 300,000-point case takes minutes: run it with
// -bench 'Map/300000'.
func BenchmarkMap(b *testing.B) {
	for _, n := range []int{29100, 300000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			vecs, _ := planted(max(1, n/150), 150, 768, 1.0, 11)
			vecs = vecs[:n]
			ctx := context.Background()
			for b.Loop() {
				var peak uint64
				sample := func() {
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					peak = max(peak, ms.HeapInuse)
				}
				start := time.Now()
				graph, err := Neighbours(ctx, vecs, 15, func(int) { sample() })
				if err != nil {
					b.Fatal(err)
				}
				knn := time.Since(start)
				if _, err := Layout(ctx, vecs, graph, LayoutOptions{Seed: 1}, func(Step, int, int) { sample() }); err != nil {
					b.Fatal(err)
				}
				layout := time.Since(start) - knn
				if _, err := Cluster(ctx, vecs, LevelSizes(n), 1); err != nil {
					b.Fatal(err)
				}
				sample()
				b.ReportMetric(knn.Seconds(), "neighbours-s")
				b.ReportMetric(layout.Seconds(), "layout-s")
				b.ReportMetric((time.Since(start) - knn - layout).Seconds(), "clusters-s")
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			}
		})
	}
}
