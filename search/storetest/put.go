package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/storage"
)

// failingAfter embeds with hash vectors until it has embedded budget
// texts, then fails every call, or, with cancel set, cancels the
// caller's context instead (a client that gives up).
type failingAfter struct {
	hashvec.Embedder
	mu     sync.Mutex
	budget int
	cancel context.CancelFunc
}

var errEndpointDown = errors.New("the embedding endpoint is down")

func (f *failingAfter) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	over := f.budget < len(texts)
	f.budget -= len(texts)
	f.mu.Unlock()
	if over {
		if f.cancel != nil {
			f.cancel()
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %w", storage.ErrUnavailable, errEndpointDown)
	}
	return f.Embedder.Embed(ctx, texts)
}

// putIsAllOrNothing checks, through an engine over s, that catalog.Catalog.Put
// stores a batch whole or not at all: an embedding endpoint that fails
// part way, or a client that gives up part way, leaves the papers stored
// before as they were and adds none.
func putIsAllOrNothing(t *testing.T, s storage.Store) {
	ctx := context.Background()
	papers := pagingCorpus(60)
	good, err := search.NewEngine(s, hashvec.Embedder{Model: Model}, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := catalog.New(good, catalog.Options{}).Put(ctx, papers[:10]); err != nil {
		t.Fatal(err)
	}
	// The batch: 10 stored papers changed and 50 new ones.
	batch := make([]papersearch.Paper, len(papers))
	copy(batch, papers)
	for i := range 10 {
		batch[i].Abstract += " Revised."
	}
	check := func(t *testing.T, what string) {
		t.Helper()
		if n, _ := s.Count(ctx); n != 10 {
			t.Errorf("%s: %d papers stored, want the 10 stored before", what, n)
		}
		got, err := s.Lookup(ctx, []string{batch[0].ID, batch[9].ID, batch[10].ID, batch[59].ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[batch[0].ID].Abstract != papers[0].Abstract || got[batch[9].ID].Abstract != papers[9].Abstract {
			t.Errorf("%s: the stored papers changed or new ones came in: %+v", what, got)
		}
	}
	for _, tc := range []struct {
		name   string
		budget int // texts embedded before the failure (each paper is its text and 3 sentences)
		cancel bool
	}{{"endpoint fails", 80, false}, {"client gives up", 120, true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			emb := &failingAfter{Embedder: hashvec.Embedder{Model: Model}, budget: tc.budget}
			if tc.cancel {
				emb.cancel = cancel
			}
			eng, err := search.NewEngine(s, emb, search.Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = catalog.New(eng, catalog.Options{}).Put(ctx, batch)
			if !errors.Is(err, catalog.ErrNothingStored) || (tc.cancel && !errors.Is(err, context.Canceled)) ||
				(!tc.cancel && !errors.Is(err, storage.ErrUnavailable)) {
				t.Fatalf("Put: %v, want ErrNothingStored and the cause", err)
			}
			check(t, tc.name)
		})
	}
	// And whole when nothing fails.
	sum, err := catalog.New(good, catalog.Options{}).Put(ctx, batch)
	if err != nil || sum.New != 50 || sum.Updated != 10 {
		t.Fatalf("Put: %+v, %v", sum, err)
	}
	if n, _ := s.Count(ctx); n != 60 {
		t.Errorf("%d papers after a whole Put, want 60", n)
	}
}

var _ embed.Embedder = (*failingAfter)(nil)
