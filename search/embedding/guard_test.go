package embedding_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/embedding"
	"github.com/papersearch/papersearch/search/searchtest"
	"github.com/papersearch/papersearch/search/storage"
	"github.com/papersearch/papersearch/search/storetest"
)

// switchEmbedder embeds with hash vectors, or fails as the endpoint
// client does once its retries gave up on an endpoint that refuses
// connections, while down is set; it counts the calls it gets.
type switchEmbedder struct {
	down  atomic.Bool
	busy  atomic.Bool // answers only when the caller's context ends, as a loaded in-process model past a deadline
	calls atomic.Int64
}

func (s *switchEmbedder) Info() embed.ModelInfo { return storetest.Model }

func (s *switchEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	s.calls.Add(1)
	if s.busy.Load() {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if s.down.Load() {
		return nil, fmt.Errorf("%w: dial tcp 127.0.0.1:1: connect: connection refused", embed.ErrUnavailable)
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
	if err := store.Upsert(context.Background(), []storage.Document{storetest.Doc(1), storetest.Doc(2), storetest.Doc(3)}); err != nil {
		t.Fatal(err)
	}
	return eng
}

// TestQueryEmbeddingBreaker: with the embedder down, the first
// embedding.BreakerFailures searches try it and answer lexically; every search after
// them answers lexically without calling it at all (so a degraded search
// costs what a lexical one does), and a dense-only search says the
// dependency is unavailable.
func TestQueryEmbeddingBreaker(t *testing.T) {
	ctx := context.Background()
	emb := &switchEmbedder{}
	emb.down.Store(true)
	eng := breakerEngine(t, emb, time.Hour) // no probe during this test
	for i := range embedding.BreakerFailures + 20 {
		res, err := eng.Search(ctx, search.Query{Text: fmt.Sprintf("abstract number %d", i), Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Degraded) != 1 || res.Degraded[0] != "dense" || len(res.Hits) == 0 {
			t.Fatalf("search %d: degraded %v, %d hits; want lexical results marked degraded", i, res.Degraded, len(res.Hits))
		}
	}
	if n := emb.calls.Load(); n != embedding.BreakerFailures {
		t.Errorf("the embedder was called %d times, want %d: searches kept waiting for it", n, embedding.BreakerFailures)
	}
	if _, err := eng.Search(ctx, search.Query{Text: "abstract", Mode: search.Dense, Limit: 3}); !errors.Is(err, storage.ErrUnavailable) {
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
	for i := range embedding.BreakerFailures {
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

func paper(id, abstract string, tags ...string) papersearch.Paper {
	return papersearch.Paper{ID: id, Title: "Paper " + id, Abstract: abstract, Tags: tags}
}

// TestWritesRefusedWhileBreakerOpen: once searches found the embedder
// down, a write that needs embedding fails at once with ErrUnavailable
// without calling it, storing nothing, as do an import and Embed; a write that
// needs no embedding (a stored paper retagged) still succeeds.
func TestWritesRefusedWhileBreakerOpen(t *testing.T) {
	ctx := context.Background()
	emb := &switchEmbedder{}
	eng := breakerEngine(t, emb, time.Hour) // no probe during this test
	stored := paper("kept", "A paper stored while the embedder answered.")
	if _, err := catalog.New(eng, catalog.Options{}).Put(ctx, []papersearch.Paper{stored}); err != nil {
		t.Fatal(err)
	}
	emb.down.Store(true)
	for i := range embedding.BreakerFailures {
		eng.Search(ctx, search.Query{Text: fmt.Sprintf("trip %d", i), Limit: 3})
	}
	calls := emb.calls.Load()
	_, err := catalog.New(eng, catalog.Options{}).Put(ctx, []papersearch.Paper{paper("new", "A paper that needs embedding.")})
	if !errors.Is(err, storage.ErrUnavailable) || !errors.Is(err, catalog.ErrNothingStored) {
		t.Errorf("Put with the breaker open: %v, want ErrUnavailable and ErrNothingStored", err)
	}
	if _, err := catalog.New(eng, catalog.Options{}).Import(ctx, catalog.Papers([]papersearch.Paper{paper("imported", "An imported paper.")}), catalog.ImportOptions{}); !errors.Is(err, storage.ErrUnavailable) {
		t.Errorf("Import with the breaker open: %v, want ErrUnavailable", err)
	}
	if _, _, err := eng.Embed(ctx, "", []string{"a text"}); !errors.Is(err, storage.ErrUnavailable) {
		t.Errorf("Embed with the breaker open: %v, want ErrUnavailable", err)
	}
	if n := emb.calls.Load(); n != calls {
		t.Errorf("the embedder was called %d times by refused writes", n-calls)
	}
	for _, id := range []string{"new", "imported"} {
		if _, err := eng.Get(ctx, id); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("the refused paper %s: %v, want ErrNotFound", id, err)
		}
	}
	stored.Tags = []string{"retagged"}
	if _, err := catalog.New(eng, catalog.Options{}).Put(ctx, []papersearch.Paper{stored}); err != nil {
		t.Errorf("a write that needs no embedding, with the breaker open: %v", err)
	}
}

// TestWriteFailureOpensBreaker: a write whose embedding fails for want of
// an answer opens the breaker at once, so the next write and search do not
// wait for the embedder; once it answers, writes alone (no search comes)
// start the probe that closes the breaker, and succeed again.
func TestWriteFailureOpensBreaker(t *testing.T) {
	ctx := context.Background()
	emb := &switchEmbedder{}
	emb.down.Store(true)
	eng := breakerEngine(t, emb, 50*time.Millisecond)
	if _, err := catalog.New(eng, catalog.Options{}).Put(ctx, []papersearch.Paper{paper("w1", "The first write finds the embedder down.")}); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("first write: %v, want ErrUnavailable", err)
	}
	calls := emb.calls.Load()
	if _, err := catalog.New(eng, catalog.Options{}).Put(ctx, []papersearch.Paper{paper("w2", "The second write is refused.")}); !errors.Is(err, storage.ErrUnavailable) {
		t.Errorf("second write: %v, want ErrUnavailable", err)
	}
	res, err := eng.Search(ctx, search.Query{Text: "abstract", Limit: 3})
	if err != nil || len(res.Degraded) != 1 {
		t.Errorf("search after the failed write: %v, degraded %v; want lexical results", err, res.Degraded)
	}
	if n := emb.calls.Load(); n != calls {
		t.Errorf("the embedder was called %d times after one write found it down", n-calls)
	}
	emb.down.Store(false)
	deadline := time.Now().Add(30 * time.Second) // a bound on waiting, not a latency target
	for i := 0; ; i++ {
		_, err := catalog.New(eng, catalog.Options{}).Put(ctx, []papersearch.Paper{paper("w3", "A write once the embedder is back.")})
		if err == nil {
			break
		}
		if !errors.Is(err, storage.ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("write %d after the embedder came back: %v", i+1, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := eng.Get(ctx, "w3"); err != nil {
		t.Errorf("the write that succeeded: %v", err)
	}
}

// TestBusyEmbedderKeepsBreakerClosed: a write whose deadline passes while
// the embedder is busy (an in-process model under load) fails alone; the
// breaker stays closed, so the next write is embedded and searches keep
// their dense side.
func TestBusyEmbedderKeepsBreakerClosed(t *testing.T) {
	emb := &switchEmbedder{}
	emb.busy.Store(true)
	eng := breakerEngine(t, emb, time.Hour) // an opened breaker would stay open
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := catalog.New(eng, catalog.Options{}).Put(ctx, []papersearch.Paper{paper("b1", "A write past its deadline.")}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("write past its deadline: %v", err)
	}
	emb.busy.Store(false)
	if _, err := catalog.New(eng, catalog.Options{}).Put(context.Background(), []papersearch.Paper{paper("b2", "The next write is embedded.")}); err != nil {
		t.Fatalf("the next write: %v", err)
	}
	res, err := eng.Search(context.Background(), search.Query{Text: "abstract", Limit: 3})
	if err != nil || len(res.Degraded) != 0 {
		t.Errorf("search after a busy embedder's deadline: %v, degraded %v", err, res.Degraded)
	}
}

// TestQueryModels: a query embedded by some of a pair's models runs those
// alone, remembers their parts, and a later query by all of them runs only
// the others; the parts add up to the whole vector, which is Query's.
func TestQueryModels(t *testing.T) {
	parts := []*switchEmbedder{{}, {}, {}}
	m, err := embedding.New(embed.NewPair(parts[0], parts[1], parts[2]), embedding.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	calls := func() [3]int64 { return [3]int64{parts[0].calls.Load(), parts[1].calls.Load(), parts[2].calls.Load()} }
	core, err := m.QueryModels(ctx, "graph networks", 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if c := calls(); c != [3]int64{1, 1, 0} {
		t.Fatalf("calls of each model after the first two's vector: %v", c)
	}
	whole, err := m.QueryModels(ctx, "graph networks", 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	if c := calls(); c != [3]int64{1, 1, 1} {
		t.Fatalf("calls of each model after the whole vector: %v", c)
	}
	rest, err := m.QueryModels(ctx, "graph networks", 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	again, err := m.QueryModels(ctx, "graph networks", 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	q, err := m.Query(ctx, "graph networks")
	if err != nil {
		t.Fatal(err)
	}
	if c := calls(); c != [3]int64{1, 1, 1} {
		t.Fatalf("calls of each model after remembered vectors: %v", c)
	}
	d := storetest.Model.Dim
	if len(whole) != 3*d || !slices.Equal(q, whole) || !slices.Equal(again, core) {
		t.Fatalf("Query gave %d values, QueryModels %d; remembered parts differ: %v", len(q), len(whole), !slices.Equal(again, core))
	}
	for i := range whole {
		if i >= 2*d && core[i] != 0 || i < 2*d && rest[i] != 0 || core[i]+rest[i] != whole[i] {
			t.Fatalf("value %d: the first two models' %v, the third's %v, the whole's %v", i, core[i], rest[i], whole[i])
		}
	}
}
