package atlas

import (
	"context"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/topk"
)

// exactLimit is the most points Neighbours finds the neighbours of
// exactly; beyond it, NN-descent (Dong, Moses and Li 2011), whose cost
// grows with n rather than n².
const exactLimit = 50000

// nnDescent approximates each unit vector's k most similar others by
// NN-descent: from random neighbours, each round compares every point's
// neighbours (new ones against all) with each other, as a neighbour's
// neighbour is likely a neighbour, until a round changes almost nothing.
// The comparisons run across the cores; their results are applied in one
// order, so the same vectors and seed give the same graph.
func nnDescent(ctx context.Context, vecs [][]float32, k int, seed uint64, done func(rows int)) ([][]Neighbour, error) {
	n := len(vecs)
	rng := rand.New(rand.NewPCG(seed, 0x4e4e))
	heaps := make([]*topk.Heap, n)
	isNew := make([]map[int]bool, n) // neighbours not yet joined
	for i := range heaps {
		heaps[i] = topk.New(k)
		isNew[i] = map[int]bool{}
		for heaps[i].Len() < k {
			j := rng.IntN(n)
			if j == i || heaps[i].Holds(j) {
				continue
			}
			heaps[i].Push(j, embed.Dot(vecs[i], vecs[j]))
			isNew[i][j] = true
		}
	}
	const sample = 15 // new neighbours a point joins per round, each way
	for round := range 12 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Each point's new and old neighbours, with the points that have it
		// as one (reverse), sampled.
		fresh, old := make([][]int, n), make([][]int, n)
		for i := range heaps {
			for _, nb := range heaps[i].Items() {
				if isNew[i][nb.Index] {
					fresh[i] = append(fresh[i], nb.Index)
				} else {
					old[i] = append(old[i], nb.Index)
				}
			}
			rng.Shuffle(len(fresh[i]), func(a, b int) { fresh[i][a], fresh[i][b] = fresh[i][b], fresh[i][a] })
			fresh[i] = fresh[i][:min(sample, len(fresh[i]))]
			for _, j := range fresh[i] {
				delete(isNew[i], j)
			}
		}
		freshRev, oldRev := make([][]int, n), make([][]int, n)
		for i := range n {
			for _, j := range fresh[i] {
				freshRev[j] = append(freshRev[j], i)
			}
			for _, j := range old[i] {
				oldRev[j] = append(oldRev[j], i)
			}
		}
		for i := range n {
			for _, rev := range []*[][]int{&freshRev, &oldRev} {
				r := (*rev)[i]
				if len(r) > sample {
					rng.Shuffle(len(r), func(a, b int) { r[a], r[b] = r[b], r[a] })
					(*rev)[i] = r[:sample]
				}
			}
		}
		// The local joins, a chunk of points at a time: pairs compared in
		// parallel, applied in point order.
		type pair struct {
			a, b int32
			sim  float32
		}
		updates := 0
		const chunk = 4096
		for from := 0; from < n; from += chunk {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			to := min(from+chunk, n)
			pairs := make([][]pair, to-from)
			jobs := make(chan int)
			var wg sync.WaitGroup
			for range runtime.GOMAXPROCS(0) {
				wg.Go(func() {
					for i := range jobs {
						nw := slices.Concat(fresh[i], freshRev[i])
						od := slices.Concat(old[i], oldRev[i])
						var out []pair
						for x, u := range nw {
							for _, v := range nw[x+1:] {
								if u != v {
									out = append(out, pair{int32(u), int32(v), embed.Dot(vecs[u], vecs[v])})
								}
							}
							for _, v := range od {
								if u != v {
									out = append(out, pair{int32(u), int32(v), embed.Dot(vecs[u], vecs[v])})
								}
							}
						}
						pairs[i-from] = out
					}
				})
			}
			for i := from; i < to; i++ {
				jobs <- i
			}
			close(jobs)
			wg.Wait()
			for _, ps := range pairs {
				for _, p := range ps {
					for _, e := range [2][2]int32{{p.a, p.b}, {p.b, p.a}} {
						h := heaps[e[0]]
						if h.Holds(int(e[1])) || !h.Beats(int(e[1]), p.sim) {
							continue
						}
						h.Push(int(e[1]), p.sim)
						isNew[e[0]][int(e[1])] = true
						updates++
					}
				}
			}
			if done != nil {
				done((round*n + to) / 12)
			}
		}
		if updates < n*k/1000 {
			break
		}
	}
	out := make([][]Neighbour, n)
	for i := range heaps {
		out[i] = heaps[i].Sorted()
	}
	if done != nil {
		done(n)
	}
	return out, nil
}
