package sqlite

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/topk"
	"github.com/papersearch/papersearch/search/storage"
)

// nearest finds the k allowed vectors with the largest cosine similarity
// to v: a first pass over int8 codes (a quarter of the memory traffic of
// float32), then exact re-scoring of the best candidates.
func (x *index) nearest(ctx context.Context, v []float32, k int, f papersearch.Filter) ([]storage.Candidate, error) {
	found, err := x.nearestMany(ctx, [][]float32{v}, []int{k}, f)
	if err != nil {
		return nil, err
	}
	return found[0], nil
}

// scanQuery is one query of a first pass: its int8 codes up to its last
// non-zero one, their scale, and the rows it keeps for re-scoring.
type scanQuery struct {
	codes []int8
	scale float32
	keep  int
}

// nearestMany answers several queries as nearest does, the k[i] nearest
// to vs[i], in one first pass: each row's codes are read from memory once
// for all of them, which is what a pass over a large index waits on.
func (x *index) nearestMany(ctx context.Context, vs [][]float32, ks []int, f papersearch.Filter) ([][]storage.Candidate, error) {
	dim := x.dim
	for _, v := range vs {
		if len(v) != dim {
			return nil, fmt.Errorf("nearest: %w: %d, want %d", storage.ErrDimension, len(v), dim)
		}
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	excluded := x.rowsOf(f.Exclude)
	qs := make([]scanQuery, len(vs))
	for i, v := range vs {
		codes := make([]int8, dim)
		scale := embed.Quantize(codes, v)
		// A query of fewer models than the index holds (the gate's core, a
		// recommendation's) is zero past them: its dot products stop where
		// it does, the same sums for less work.
		qs[i] = scanQuery{codes: codes[:nonZeroPrefix(codes)], scale: scale, keep: max(RescoreFactor*ks[i], MinRescore) + len(excluded)}
	}
	allow := x.allow(f)
	plain := storage.FieldsFree(f) && len(f.Only) == 0
	scan := func(from, to int, firsts []*topk.Heap) {
		for r := from; r < to; r++ {
			if r%8192 == 0 && ctx.Err() != nil {
				return
			}
			if x.ids[r] == "" || !plain && !allow(r) {
				continue
			}
			for i, q := range qs {
				firsts[i].Push(r, float32(x.dotCodes(q.codes, r))*x.scales[r]*q.scale)
			}
		}
	}
	// A large index's first pass is split across the cores that other
	// queries leave idle; under load each query scans alone.
	running := int(x.inFlight.Add(1))
	defer x.inFlight.Add(-1)
	parts := 1
	if len(x.ids) >= parallelScanRows {
		parts = max(1, runtime.GOMAXPROCS(0)-running+1)
	}
	firsts := make([][]*topk.Heap, parts) // by part, then query
	var wg sync.WaitGroup
	for p := range parts {
		firsts[p] = make([]*topk.Heap, len(qs))
		for i, q := range qs {
			firsts[p][i] = topk.New(q.keep)
		}
		from, to := p*len(x.ids)/parts, (p+1)*len(x.ids)/parts
		wg.Add(1)
		go func() { defer wg.Done(); scan(from, to, firsts[p]) }()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]storage.Candidate, len(vs))
	for i, v := range vs {
		first := firsts[0][i]
		for _, other := range firsts[1:] {
			for _, it := range other[i].Items() {
				first.Push(it.Index, it.Score)
			}
		}
		n := nonZeroPrefix(v)
		top := newTopK(ks[i])
		for _, it := range first.Items() {
			r := it.Index
			if !excluded[r] {
				top.push(storage.Candidate{ID: x.ids[r], Score: embed.Dot(v[:n], x.vectors[r*dim:r*dim+n])})
			}
		}
		out[i] = top.sorted()
	}
	return out, nil
}

// nonZeroPrefix is the length of v without its trailing zeros.
func nonZeroPrefix[T int8 | float32](v []T) int {
	n := len(v)
	for n > 0 && v[n-1] == 0 {
		n--
	}
	return n
}
