package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/internal/drive"
	"github.com/papersearch/papersearch/search"
)

// The requests a bench drives: each kind's request maker, and what the
// recommend and search-during-import kinds set up first.

// Collections the recommend requests ask for: benchCollectionCount of
// benchCollectionSize papers each, a paper and its nearest.
const (
	benchCollectionCount = 8
	benchCollectionSize  = 50
)

// benchCollections tags the collections the recommend requests ask for:
// collection k ("bench-k") is a paper and the papers most like it, as a
// reader gathers a topic.
func benchCollections(ctx context.Context, eng *search.Engine, cat *catalog.Catalog, papers []papersearch.Paper) error {
	order := rand.New(rand.NewPCG(3, 4)).Perm(len(papers))
	for k := range benchCollectionCount {
		seed := papers[order[k%len(order)]].ID
		res, err := eng.Similar(ctx, search.SimilarQuery{ID: seed, Limit: benchCollectionSize - 1})
		if err != nil {
			return fmt.Errorf("bench: collection %d: %w", k, err)
		}
		ids := []string{seed}
		for _, h := range res.Hits {
			ids = append(ids, h.ID)
		}
		if _, err := cat.Retag(ctx, ids, []string{"bench-" + strconv.Itoa(k)}, nil); err != nil {
			return fmt.Errorf("bench: collection %d: %w", k, err)
		}
	}
	return nil
}

// importCopies starts importing a copy of each paper (its own id, its
// title marked, so each is embedded with the model) through cat, as
// POST /v1/imports does; stop ends it and returns the papers it stored per
// second.
func importCopies(ctx context.Context, cat *catalog.Catalog, papers []papersearch.Paper) (stop func() (float64, error)) {
	ctx, cancel := context.WithCancel(ctx)
	var stored atomic.Int64
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := cat.Import(ctx, &copies{papers: papers}, catalog.ImportOptions{Batch: 8, Progress: func(p catalog.ImportProgress) {
			stored.Store(int64(p.Stored))
		}})
		done <- err
	}()
	return func() (float64, error) {
		took := time.Since(start)
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			return 0, fmt.Errorf("bench: import during search: %w", err)
		}
		return float64(stored.Load()) / took.Seconds(), nil
	}
}

// copies is a catalog.Source of a copy of each paper, as importCopies
// makes them.
type copies struct {
	papers []papersearch.Paper
	next   int
}

func (c *copies) Next() (papersearch.Paper, error) {
	if c.next == len(c.papers) {
		return papersearch.Paper{}, io.EOF
	}
	p := c.papers[c.next]
	c.next++
	p.ID, p.Title, p.Sources = "bench-copy:"+p.ID, p.Title+" (imported copy)", nil
	return p, nil
}

// requests returns the request maker of one kind for drive.Run, over
// papers in a fixed random order.
func requests(kind, base string, papers []papersearch.Paper) func(ctx context.Context, c *http.Client, n int) error {
	order := rand.New(rand.NewPCG(1, 2)).Perm(len(papers))
	pick := func(n int) papersearch.Paper { return papers[order[n%len(order)]] }
	return func(ctx context.Context, c *http.Client, n int) error {
		var req *http.Request
		switch kind {
		case "search", "search-explained", "search-during-import":
			// A different question each time, so the query cache stays cold
			// (the explained ones, and those during an import, from other
			// papers than the plain ones);
			// explained as the search page asks.
			explain, from := kind == "search-explained", n
			switch kind {
			case "search-explained":
				from += len(papers) / 2
			case "search-during-import":
				from += len(papers) / 4
			}
			body, _ := json.Marshal(map[string]any{"query": pick(from).Title + " " + strconv.Itoa(n), "limit": 10, "explain": explain})
			req, _ = http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/search", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
		case "similar":
			req, _ = http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/papers/"+url.PathEscape(pick(n).ID)+"/similar?limit=10", nil)
		case "recommend": // for one of the 50-paper collections
			req, _ = http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/collections/bench-"+strconv.Itoa(n%benchCollectionCount)+"/recommendations?limit=10", nil)
		case "aspect": // by method sentences (a paper without one is answered as a whole)
			req, _ = http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/papers/"+url.PathEscape(pick(n).ID)+"/similar?aspect=method&limit=10", nil)
		default:
			req, _ = http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/papers/"+url.PathEscape(pick(n).ID), nil)
		}
		return drive.Fetch(c, req)
	}
}
