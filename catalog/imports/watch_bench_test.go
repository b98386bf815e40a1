package imports

import (
	"context"
	"testing"

	"github.com/papersearch/papersearch/seeds/fetch/fetchtest"
)

// BenchmarkWatchRunFindsNothing measures a watch run that finds nothing
// new: a watch of an OpenAlex filter whose 200 works are stored runs again
// (due at once, claimed, the one request for the day of the newest work,
// that work read and found unchanged, the run recorded). The fake answers
// on loopback at once: against OpenAlex, add the request's round trip;
// against arXiv, its 3 s between requests bounds runs, not this work.
func BenchmarkWatchRunFindsNothing(b *testing.B) {
	ctx := context.Background()
	env := newWatchEnvTB(b)
	up := fetchtest.OpenAlexLive(b, "topics.id:T1", "me@example.org", 200)
	env.cfg.OpenAlexURL = up.URL
	up.Publish(200)
	w := env.openTB(b)
	watch, err := w.Add(ctx, WatchRequest{Source: "openalex", Target: "topics.id:T1", Since: ptr("2025-12-01")})
	if err != nil {
		b.Fatal(err)
	}
	if got, err := w.RunHere(ctx, watch.ID); err != nil || got.LastAdded != 200 {
		b.Fatalf("the first run: %+v %v", got, err)
	}
	before := up.Requests()
	b.ResetTimer()
	for b.Loop() {
		got, err := w.RunHere(ctx, watch.ID)
		if err != nil || got.LastAdded != 0 || got.LastRead != 1 {
			b.Fatalf("a run: %+v %v", got, err)
		}
	}
	b.ReportMetric(float64(up.Requests()-before)/float64(b.N), "requests/op")
}
