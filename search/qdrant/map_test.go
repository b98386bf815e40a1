package qdrant

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/atlas/corpusmap"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/sqlite"
	"github.com/papersearch/papersearch/search/storage"
)

// TestQdrantServesTheSameMap: the same papers in both stores make the same
// map (the same papers at the same places in the same clusters, though
// Qdrant reads them in another order), and a filter keeps the same papers.
func TestQdrantServesTheSameMap(t *testing.T) {
	ctx := context.Background()
	emb := hashvec.Embedder{Model: embed.ModelInfo{Name: "hash-test", Dim: 32}}
	papers := testenv.MLPapers(t, 120)
	q := openTestQdrant(t, emb.Info())
	lite, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "p.db"), emb.Info())
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	type place struct {
		x, y   float32
		finest int
	}
	var maps []map[string]place
	var filtered [][]string
	for _, s := range []storage.Store{lite, q} {
		eng, err := search.NewEngine(s, emb, search.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := catalog.New(eng, catalog.Options{}).Ingest(ctx, papers, nil); err != nil {
			t.Fatal(err)
		}
		m, err := corpusmap.Build(ctx, eng, corpusmap.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]place{}
		for i, id := range m.IDs {
			got[id] = place{m.Points[i][0], m.Points[i][1], m.Of[len(m.Of)-1][i]}
		}
		maps = append(maps, got)
		cctx, cancel := context.WithCancel(ctx)
		keeper := corpusmap.New(eng, nil)
		go keeper.Keep(cctx, 10*time.Millisecond)
		view, err := waitMap(cctx, keeper, corpusmap.Query{Filter: papersearch.Filter{Venues: []string{papers[0].Venue}}})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, p := range view.Points {
			ids = append(ids, p.ID)
		}
		slices.Sort(ids)
		filtered = append(filtered, ids)
	}
	if len(maps[0]) != len(papers) || len(maps[1]) != len(papers) {
		t.Fatalf("%d and %d papers mapped, want %d", len(maps[0]), len(maps[1]), len(papers))
	}
	for id, p := range maps[0] {
		if maps[1][id] != p {
			t.Errorf("%s: embedded %+v, Qdrant %+v", id, p, maps[1][id])
		}
	}
	if !slices.Equal(filtered[0], filtered[1]) || len(filtered[0]) == 0 {
		t.Errorf("filtered by venue: %d papers embedded, %d Qdrant", len(filtered[0]), len(filtered[1]))
	}
}

// waitMap waits for k's first map.
func waitMap(ctx context.Context, k *corpusmap.Keeper, q corpusmap.Query) (corpusmap.View, error) {
	for {
		view, err := k.Map(ctx, q)
		if !errors.Is(err, corpusmap.ErrNotReady) {
			return view, err
		}
		select {
		case <-ctx.Done():
			return view, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
