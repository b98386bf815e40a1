package imports

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/searchtest"
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
		w := WatchesIn(store, eng, cfg.Open, nil)
		w.store.(*recordWatches).confirm = 50 * time.Millisecond
		t.Cleanup(func() { w.Close() })
		return w
	}
	a, b := instance(), instance()
	var ids []string
	for range 3 {
		w, err := a.Add(ctx, wire.WatchRequest{Source: "openreview", Target: "ICLR.cc/2027/Conference"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, w.ID)
	}
	if list, err := b.List(ctx); err != nil || len(list) != 3 || list[0].ID != ids[0] {
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
