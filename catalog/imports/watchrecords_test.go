package imports

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/searchtest"
	"github.com/papersearch/papersearch/search/storage"
	"github.com/papersearch/papersearch/seeds/fetch/fetchtest"
)

// TestWatchesInRecords: the watches kept as a store's records, as every
// instance on one Qdrant keeps them: a watch added through one instance is
// listed and deleted through another, and of three watches due at once
// with two instances looking for due watches together, each runs exactly
// once, by whichever claimed it.
func TestWatchesInRecords(t *testing.T) {
	ctx := context.Background()
	eng, store := searchtest.Engine(t, hashvec.Embedder{Model: embed.ModelInfo{Name: "test-model", Dim: 8}}, search.Options{})
	up := fetchtest.OpenReviewLive(t, "ICLR.cc/2027/Conference", 1000)
	up.Publish(3)
	cfg := Config{DataDir: t.TempDir(), Store: "embedded test", OpenReviewURL: up.URL, Clients: NewClients()}
	instance := func() *Watches {
		w := WatchesIn(store, catalog.New(eng, catalog.Options{}), cfg.Open, nil)
		// Two seconds: a claim gives way only when its write lands a
		// second after its read, which a loaded CI machine never takes.
		w.store.(*recordWatches).confirm = 2 * time.Second
		t.Cleanup(func() { w.Close() })
		return w
	}
	a, b := instance(), instance()
	var ids []string
	for range 3 {
		w, err := a.Add(ctx, WatchRequest{Source: "openreview", Target: "ICLR.cc/2027/Conference"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, w.ID)
	}
	// All three, whatever their order: watches created within one
	// millisecond (as these may be) tie on their creation time.
	list, err := b.List(ctx)
	listed := make([]string, len(list))
	for i, w := range list {
		listed[i] = w.ID
	}
	if err != nil || !slices.Equal(slices.Sorted(slices.Values(listed)), slices.Sorted(slices.Values(ids))) {
		t.Fatalf("the other instance's list: %+v %v", list, err)
	}
	var wg sync.WaitGroup
	for _, w := range []*Watches{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.StartDue(ctx); err != nil {
				t.Error(err)
			}
			w.Wait()
		}()
	}
	wg.Wait()
	for _, id := range ids {
		got, err := b.Get(ctx, id)
		if err != nil || got.Runs != 1 || got.LastRead != 3 || got.Running {
			t.Errorf("watch %s after both instances looked: %+v %v; want one run that read 3", id, got, err)
		}
	}
	if n := up.Requests(); n != 3 {
		t.Errorf("%d requests for 3 due watches and 2 instances; want 3 (each run once)", n)
	}
	if err := b.Remove(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Get(ctx, ids[0]); !errors.Is(err, ErrNoWatch) {
		t.Errorf("a watch the other deleted: %v", err)
	}
}

// deadRecords is a store's records as a killed process sees them: once
// dead, nothing it asks reaches the store (its lease renewals are lost).
type deadRecords struct {
	storage.Records
	dead atomic.Bool
}

var errDead = errors.New("the process was killed")

func (d *deadRecords) PutRecord(ctx context.Context, kind, id string, doc []byte) error {
	if d.dead.Load() {
		return errDead
	}
	return d.Records.PutRecord(ctx, kind, id, doc)
}

func (d *deadRecords) GetRecord(ctx context.Context, kind, id string) ([]byte, error) {
	if d.dead.Load() {
		return nil, errDead
	}
	return d.Records.GetRecord(ctx, kind, id)
}

// TestKilledInstancesWatchIsTakenOver: an instance killed while it runs a
// watch (its lease no longer renewed) loses the watch to another instance
// within two lease periods, which runs it to its end: one finished run,
// every paper stored.
func TestKilledInstancesWatchIsTakenOver(t *testing.T) {
	ctx := context.Background()
	eng, store := searchtest.Engine(t, hashvec.Embedder{Model: embed.ModelInfo{Name: "test-model", Dim: 8}}, search.Options{})
	up := fetchtest.OpenReviewLive(t, "ICLR.cc/2027/Conference", 1000)
	up.Publish(3)
	hang, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	up.Before(func(*http.Request) { // the first instance's fetch hangs until the end
		if first.CompareAndSwap(false, true) {
			close(hang)
			<-release
		}
	})
	cfg := Config{DataDir: t.TempDir(), Store: "embedded test", OpenReviewURL: up.URL, Clients: NewClients()}
	const lease, confirm = time.Second, 200 * time.Millisecond
	instance := func(r storage.Records) *Watches {
		w := WatchesIn(r, catalog.New(eng, catalog.Options{}), cfg.Open, nil)
		w.store.(*recordWatches).confirm = confirm
		w.Lease = lease
		return w
	}
	dying := &deadRecords{Records: store}
	a, b := instance(dying), instance(store)
	defer b.Close()
	watch, err := a.Add(ctx, WatchRequest{Source: "openreview", Target: "ICLR.cc/2027/Conference"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.StartDue(ctx); err != nil {
		t.Fatal(err)
	}
	<-hang // a runs it
	dying.dead.Store(true)
	killed := time.Now()
	var took time.Duration
	for deadline := killed.Add(10 * lease); ; time.Sleep(lease / 10) {
		if err := b.StartDue(ctx); err != nil {
			t.Fatal(err)
		}
		b.mu.Lock()
		_, taken := b.running[watch.ID]
		b.mu.Unlock()
		if taken || time.Now().After(deadline) {
			took = time.Since(killed)
			break
		}
	}
	b.Wait()
	close(release)
	a.Close()
	got, err := b.Get(ctx, watch.ID)
	if err != nil || got.Runs != 1 || got.LastRead != 3 || took > 2*lease+2*confirm {
		t.Errorf("after the kill, taken over in %v (lease %v): %+v %v; want one run that read 3 within two lease periods", took, lease, got, err)
	}
	t.Logf("reliability: a killed instance's watch taken over in %v with a %v lease", took.Round(time.Millisecond), lease)
}
