package atlas

import (
	"context"
	"runtime"
	"sync"

	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/topk"
)

// Neighbour is one of a point's nearest points: its index, and their
// cosine similarity as its score.
type Neighbour = topk.Item

// Neighbours returns, for every unit vector of vecs, its k most similar
// others by cosine, most similar first (ties by index): up to exactLimit
// points by brute force split across the cores, rows read in blocks that
// stay in cache, over int8 codes with the best 3k re-scored exactly (the
// int8 error would have to move a neighbour below 2k others to lose it);
// beyond, approximate, by NN-descent. done, if
// not nil, is called with the rows finished so far.
func Neighbours(ctx context.Context, vecs [][]float32, k int, done func(rows int)) ([][]Neighbour, error) {
	n := len(vecs)
	k = min(k, n-1)
	out := make([][]Neighbour, n)
	if k <= 0 {
		return out, nil
	}
	if n > exactLimit {
		return nnDescent(ctx, vecs, k, 1, done)
	}
	// A first pass over int8 codes (a quarter of the memory, and the CPU's
	// int8 dot products) keeps 3k candidates, re-scored exactly.
	dim := len(vecs[0])
	codes := make([]int8, n*dim)
	scales := make([]float32, n)
	for i, v := range vecs {
		scales[i] = embed.Quantize(codes[i*dim:(i+1)*dim], v)
	}
	wide := min(3*k, n-1)
	const block = 64 // query rows that share one pass over the others
	blocks := make(chan int)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		finished int
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			tops := make([]*topk.Heap, block)
			for i := range tops {
				tops[i] = topk.New(wide)
			}
			exact := topk.New(k)
			for from := range blocks {
				to := min(from+block, n)
				for q := from; q < to; q++ {
					tops[q-from].Reset()
				}
				for j := range n {
					row := codes[j*dim : (j+1)*dim]
					for q := from; q < to; q++ {
						if q != j {
							approx := float32(embed.DotInt8(codes[q*dim:(q+1)*dim], row)) * scales[q] * scales[j]
							tops[q-from].Push(j, approx)
						}
					}
				}
				for q := from; q < to; q++ {
					exact.Reset()
					for _, c := range tops[q-from].Items() {
						exact.Push(c.Index, embed.Dot(vecs[q], vecs[c.Index]))
					}
					out[q] = exact.Sorted()
				}
				if done != nil {
					mu.Lock()
					finished += to - from
					done(finished)
					mu.Unlock()
				}
			}
		})
	}
	var err error
	for from := 0; from < n; from += block {
		if err = ctx.Err(); err != nil {
			break
		}
		blocks <- from
	}
	close(blocks)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	return out, nil
}
