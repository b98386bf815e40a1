package atlas

import (
	"context"
	"runtime"
	"slices"
	"sync"

	"github.com/papersearch/papersearch/embed"
)

// Neighbour is one of a point's nearest points: its index and their cosine
// similarity.
type Neighbour struct {
	Index int
	Sim   float32
}

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
			tops := make([]topK, block)
			for i := range tops {
				tops[i] = topK{k: wide}
			}
			exact := topK{k: k}
			for from := range blocks {
				to := min(from+block, n)
				for q := from; q < to; q++ {
					tops[q-from].reset()
				}
				for j := range n {
					row := codes[j*dim : (j+1)*dim]
					for q := from; q < to; q++ {
						if q != j {
							approx := float32(embed.DotInt8(codes[q*dim:(q+1)*dim], row)) * scales[q] * scales[j]
							tops[q-from].push(Neighbour{Index: j, Sim: approx})
						}
					}
				}
				for q := from; q < to; q++ {
					exact.reset()
					for _, c := range tops[q-from].heap {
						exact.push(Neighbour{Index: c.Index, Sim: embed.Dot(vecs[q], vecs[c.Index])})
					}
					out[q] = exact.sorted()
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

// topK keeps the k best neighbours pushed, in a min-heap on similarity
// (ties: the higher index is worse).
type topK struct {
	k    int
	heap []Neighbour
}

func (t *topK) reset() { t.heap = t.heap[:0] }

// worse reports whether a ranks below b.
func worse(a, b Neighbour) bool { return a.Sim < b.Sim || a.Sim == b.Sim && a.Index > b.Index }

func (t *topK) push(c Neighbour) {
	h := t.heap
	if len(h) < t.k {
		h = append(h, c)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(h[i], h[p]) {
				break
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
		t.heap = h
		return
	}
	if !worse(h[0], c) {
		return
	}
	h[0] = c
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && worse(h[l], h[m]) {
			m = l
		}
		if r < len(h) && worse(h[r], h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// sorted is the kept neighbours, best first, as a new slice.
func (t *topK) sorted() []Neighbour {
	out := slices.Clone(t.heap)
	slices.SortFunc(out, func(a, b Neighbour) int {
		switch {
		case worse(b, a):
			return -1
		case worse(a, b):
			return 1
		}
		return 0
	})
	return out
}
