package imports

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/papersearch/papersearch/seeds/fetch/fetchtest"
)

// TestWatchRunsShareAPool: of many watches due at once, MaxWatchRuns run
// at a time and no more (the upstream counts the requests it holds at
// once: the first until MaxWatchRuns are in flight, each a while for
// another to come), and the others wait for a slot: every one has run
// once when StartDue and Wait return.
func TestWatchRunsShareAPool(t *testing.T) {
	ctx := context.Background()
	env := newWatchEnv(t)
	up := fetchtest.OpenReviewLive(t, "ICLR.cc/2027/Conference", 1000)
	env.cfg.OpenReviewURL = up.URL
	up.Publish(3)
	var (
		inFlight, most atomic.Int64
		full, over     = make(chan struct{}), make(chan struct{})
		fullOnce, once sync.Once
	)
	up.Before(func(*http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if n >= MaxWatchRuns {
			fullOnce.Do(func() { close(full) })
		}
		if n > MaxWatchRuns {
			once.Do(func() { close(over) })
		}
		select { // the first requests wait until the pool is full
		case <-full:
		case <-time.After(10 * time.Second):
		}
		select { // and each gives a run beyond the pool the time to show
		case <-over:
		case <-time.After(200 * time.Millisecond):
		}
	})
	w := env.open(t)
	const due = 3*MaxWatchRuns + 1
	ids := make([]string, due)
	for i := range ids {
		watch, err := w.Add(ctx, WatchRequest{Source: "openreview", Target: "ICLR.cc/2027/Conference"})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = watch.ID
	}
	runDue(t, w)
	if got := most.Load(); got != MaxWatchRuns {
		t.Errorf("at most %d requests in flight at once; want %d, MaxWatchRuns", got, MaxWatchRuns)
	}
	for _, id := range ids {
		if got := get(t, w, id); got.Runs != 1 || got.LastError != "" || got.LastRead != 3 {
			t.Errorf("watch %s: %+v; want one run that read 3 papers", id, got)
		}
	}
	if n := up.Requests(); n != due {
		t.Errorf("%d requests; want one per watch, %d", n, due)
	}
}
