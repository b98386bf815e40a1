package search_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/storage"
)

// heldStore holds each Nearest, once hold is set, until release is closed.
type heldStore struct {
	storage.Store
	hold    atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (h *heldStore) Nearest(ctx context.Context, v []float32, k int, f papersearch.Filter) ([]storage.Candidate, error) {
	if h.hold.Load() {
		h.entered <- struct{}{}
		<-h.release
	}
	return h.Store.Nearest(ctx, v, k, f)
}

// TestImportGivesWayToQueries: while a search is being answered, an
// import embeds nothing (its encodes wait at their checkpoints); once the
// search has answered, the import goes on and stores every paper.
func TestImportGivesWayToQueries(t *testing.T) {
	_, _, store, papers, err := newSeededEngine(filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	held := &heldStore{Store: store, entered: make(chan struct{}, 1), release: make(chan struct{})}
	eng, err := search.NewEngine(held, model, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := catalog.New(eng, catalog.Options{}).Ingest(ctx, papers[:2], nil); err != nil {
		t.Fatal(err)
	}
	// How long an import of two papers takes here with nothing in its way.
	start := time.Now()
	if _, err := catalog.New(eng, catalog.Options{}).Import(ctx, catalog.Papers(papers[2:4]), catalog.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	alone := time.Since(start)

	held.hold.Store(true)
	answered := make(chan error, 1)
	go func() {
		_, err := eng.Search(ctx, search.Query{Text: "graph neural networks", Mode: search.Dense, Limit: 5})
		answered <- err
	}()
	<-held.entered // the search is in flight
	held.hold.Store(false)

	var stored atomic.Int64
	imported := make(chan error, 1)
	go func() {
		sum, err := catalog.New(eng, catalog.Options{}).Import(ctx, catalog.Papers(papers[4:6]), catalog.ImportOptions{
			Progress: func(p catalog.ImportProgress) { stored.Store(int64(p.Stored)) }})
		if err == nil && sum.New != 2 {
			t.Errorf("import stored %d new papers, want 2", sum.New)
		}
		imported <- err
	}()
	// Three times what the same import took alone.
	time.Sleep(3 * alone)
	if n := stored.Load(); n > 0 {
		t.Errorf("the import stored %d papers while a search was being answered", n)
	}
	close(held.release)
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	if err := <-imported; err != nil {
		t.Fatal(err)
	}
}
