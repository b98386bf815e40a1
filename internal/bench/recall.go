package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/internal/drive"
	"github.com/papersearch/papersearch/search/storage"
)

// recallQueries is how many papers' own vectors a bench over papers asks
// the store for, to compare with an exact scan.
const recallQueries = 100

// DenseRecall is the store's dense top 10 for papers' own stored vectors
// (the dense side of similar-paper queries), one query at a time: its
// latency, and its recall against an exact scan of every stored vector.
type DenseRecall struct {
	Queries  int     `json:"queries"`
	P50      float64 `json:"p50_ms"`
	P99      float64 `json:"p99_ms"`
	Recall10 float64 `json:"recall@10"`
}

// denseRecall measures DenseRecall over recallQueries papers drawn in a
// fixed order; a paper the store does not hold is not asked for.
func denseRecall(ctx context.Context, store storage.Store, papers []papersearch.Paper) (*DenseRecall, error) {
	const k = 10
	ids := make([]string, len(papers))
	for i, p := range papers {
		ids[i] = p.ID
	}
	var queries [][]float32
	for _, i := range rand.New(rand.NewPCG(3, 4)).Perm(len(ids))[:min(recallQueries, len(ids))] {
		vs, err := store.Vectors(ctx, ids[i:i+1])
		if err != nil {
			return nil, fmt.Errorf("bench: dense recall: %w", err)
		}
		if v := vs[ids[i]]; v != nil {
			queries = append(queries, v)
		}
	}
	if len(queries) == 0 {
		return nil, nil
	}
	got := make([][]storage.Candidate, len(queries))
	var lat []time.Duration
	for q, v := range queries {
		t := time.Now()
		var err error
		if got[q], err = store.Nearest(ctx, v, k, papersearch.Filter{}); err != nil {
			return nil, fmt.Errorf("bench: dense recall: %w", err)
		}
		lat = append(lat, time.Since(t))
	}
	// The exact scan reads the stored vectors a chunk of ids at a time.
	const chunk = 4096
	var held map[string][]float32
	var readErr error
	exact := exactTopK(ctx, queries, len(ids), k, func(i int) (string, []float32) {
		if i%chunk == 0 && readErr == nil {
			held, readErr = store.Vectors(ctx, ids[i:min(i+chunk, len(ids))])
		}
		return ids[i], held[ids[i]]
	})
	if readErr != nil {
		return nil, fmt.Errorf("bench: dense recall: %w", readErr)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	slices.Sort(lat)
	return &DenseRecall{Queries: len(queries), P50: ms(drive.Percentile(lat, 50)), P99: ms(drive.Percentile(lat, 99)),
		Recall10: recallAt(got, exact)}, nil
}

// recallAt is the share of the exact answers' ids that got holds, each
// query's answer against its own.
func recallAt(got, exact [][]storage.Candidate) float64 {
	found, want := 0, 0
	for q := range exact {
		want += len(exact[q])
		for _, c := range got[q] {
			if slices.ContainsFunc(exact[q], func(e storage.Candidate) bool { return e.ID == c.ID }) {
				found++
			}
		}
	}
	if want == 0 {
		return 0
	}
	return float64(found) / float64(want)
}
