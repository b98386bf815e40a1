package search_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/searchtest"
	"github.com/papersearch/papersearch/search/storetest"
)

// switchEmbedder embeds with hash vectors, or fails like an endpoint that
// refuses connections while down is set; it counts the calls it gets.
type switchEmbedder struct {
	down  atomic.Bool
	calls atomic.Int64
}

func (s *switchEmbedder) Info() embed.ModelInfo { return storetest.Model }

func (s *switchEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	s.calls.Add(1)
	if s.down.Load() {
		return nil, errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = hashvec.Of(t, storetest.Model.Dim)
	}
	return out, nil
}

func breakerEngine(t *testing.T, emb *switchEmbedder, cooldown time.Duration) *search.Engine {
	t.Helper()
	eng, store := searchtest.Engine(t, emb, search.Options{BreakerCooldown: cooldown})
	if err := store.Upsert(context.Background(), []search.Document{storetest.Doc(1), storetest.Doc(2), storetest.Doc(3)}); err != nil {
		t.Fatal(err)
	}
	return eng
}

// TestQueryEmbeddingBreaker: with the embedder down, the first
// search.BreakerFailures searches try it and answer lexically; every search after
// them answers lexically without calling it at all (so a degraded search
// costs what a lexical one does), and a dense-only search says the
// dependency is unavailable.
func TestQueryEmbeddingBreaker(t *testing.T) {
	ctx := context.Background()
	emb := &switchEmbedder{}
	emb.down.Store(true)
	eng := breakerEngine(t, emb, time.Hour) // no probe during this test
	for i := range search.BreakerFailures + 20 {
		res, err := eng.Search(ctx, search.Query{Text: fmt.Sprintf("abstract number %d", i), Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Degraded) != 1 || res.Degraded[0] != "dense" || len(res.Hits) == 0 {
			t.Fatalf("search %d: degraded %v, %d hits; want lexical results marked degraded", i, res.Degraded, len(res.Hits))
		}
	}
	if n := emb.calls.Load(); n != search.BreakerFailures {
		t.Errorf("the embedder was called %d times, want %d: searches kept waiting for it", n, search.BreakerFailures)
	}
	if _, err := eng.Search(ctx, search.Query{Text: "abstract", Mode: search.Dense, Limit: 3}); !errors.Is(err, search.ErrUnavailable) {
		t.Errorf("dense search with the breaker open: err %v, want ErrUnavailable", err)
	}
}

// TestQueryEmbeddingBreakerRecovers: once the embedder answers again, a
// background probe closes the breaker and searches are dense again.
func TestQueryEmbeddingBreakerRecovers(t *testing.T) {
	ctx := context.Background()
	emb := &switchEmbedder{}
	emb.down.Store(true)
	eng := breakerEngine(t, emb, 10*time.Millisecond)
	for i := range search.BreakerFailures {
		eng.Search(ctx, search.Query{Text: fmt.Sprintf("trip %d", i), Limit: 3})
	}
	emb.down.Store(false)
	deadline := time.Now().Add(30 * time.Second) // a bound on waiting, not a latency target
	for i := 0; ; i++ {
		res, err := eng.Search(ctx, search.Query{Text: fmt.Sprintf("recover %d", i), Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Degraded) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still degraded after %d searches", i+1)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
