package atlas

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/papersearch/papersearch/embed"
)

// Hierarchy is a nested clustering of points, coarsest level first: each
// cluster of a level lies within one cluster of the level above.
type Hierarchy struct {
	// Of[l][i] is point i's cluster at level l (0 to Sizes[l]-1).
	Of [][]int
	// Parent[l][c] is the cluster of level l-1 holding cluster c of level
	// l; Parent[0] is nil.
	Parent [][]int
}

// LevelSizes is how many clusters each level of a map of n points has,
// coarsest first: about √n at the finest (clusters of about √n papers),
// a quarter and a sixteenth of that above, at least two, levels that
// would repeat a size left out.
func LevelSizes(n int) []int {
	fine := max(2, int(math.Round(math.Sqrt(float64(n)))))
	fine = min(fine, n)
	var out []int
	for _, s := range []int{max(2, fine/16), max(2, fine/4), fine} {
		if s <= n && (len(out) == 0 || s > out[len(out)-1]) {
			out = append(out, s)
		}
	}
	return out
}

// Cluster groups unit vectors into len(sizes) nested levels of clusters of
// those sizes (coarsest first): spherical k-means at the finest, its
// clusters then merged pairwise by Ward's criterion (the merge that adds
// the least squared distance to the centroids) into each coarser level.
func Cluster(ctx context.Context, vecs [][]float32, sizes []int, seed uint64) (Hierarchy, error) {
	levels := len(sizes)
	h := Hierarchy{Of: make([][]int, levels), Parent: make([][]int, levels)}
	if levels == 0 || len(vecs) == 0 {
		return h, nil
	}
	fine, err := kmeans(ctx, vecs, sizes[levels-1], rand.New(rand.NewPCG(seed, 0xc1)))
	if err != nil {
		return h, err
	}
	h.Of[levels-1] = fine
	// The finest clusters' sums and sizes, merged level by level.
	dim := len(vecs[0])
	k := sizes[levels-1]
	sums := make([][]float64, k)
	count := make([]int, k)
	for c := range sums {
		sums[c] = make([]float64, dim)
	}
	for i, c := range fine {
		count[c]++
		for d, x := range vecs[i] {
			sums[c][d] += float64(x)
		}
	}
	// group[c] is the current group of finest cluster c.
	group := make([]int, k)
	for c := range group {
		group[c] = c
	}
	alive := make([]int, k) // live group ids
	for c := range alive {
		alive[c] = c
	}
	for l := levels - 2; l >= 0; l-- {
		for len(alive) > sizes[l] {
			a, b := closestWard(alive, sums, count)
			for d := range sums[a] {
				sums[a][d] += sums[b][d]
			}
			count[a] += count[b]
			alive = slices.DeleteFunc(alive, func(g int) bool { return g == b })
			for c := range group {
				if group[c] == b {
					group[c] = a
				}
			}
		}
		// Number this level's groups 0..len(alive)-1.
		number := map[int]int{}
		for i, g := range alive {
			number[g] = i
		}
		of := make([]int, len(vecs))
		for i, c := range fine {
			of[i] = number[group[c]]
		}
		h.Of[l] = of
		// Parents of the level below: each of its clusters lies in one group.
		below := h.Of[l+1]
		parent := make([]int, slices.Max(below)+1)
		for i := range vecs {
			parent[below[i]] = of[i]
		}
		h.Parent[l+1] = parent
	}
	return h, nil
}

// closestWard is the pair of groups whose merge raises the within-group
// sum of squares least: |A||B|/(|A|+|B|)·‖μA−μB‖². A group k-means left
// empty (as many clusters asked as there are distinct vectors, or fewer)
// costs nothing to merge.
func closestWard(alive []int, sums [][]float64, count []int) (int, int) {
	best, ba, bb := math.Inf(1), alive[0], alive[1]
	for x, a := range alive {
		for _, b := range alive[x+1:] {
			na, nb := float64(count[a]), float64(count[b])
			if na == 0 || nb == 0 {
				return a, b
			}
			var d2 float64
			for d := range sums[a] {
				diff := sums[a][d]/na - sums[b][d]/nb
				d2 += diff * diff
			}
			if cost := na * nb / (na + nb) * d2; cost < best {
				best, ba, bb = cost, a, b
			}
		}
	}
	return ba, bb
}

// kmeans clusters unit vectors into k by cosine (spherical k-means, seeded
// by k-means++), returning each point's cluster.
func kmeans(ctx context.Context, vecs [][]float32, k int, rng *rand.Rand) ([]int, error) {
	n, dim := len(vecs), len(vecs[0])
	k = min(k, n)
	centres := make([][]float32, 0, k)
	// k-means++: each next centre drawn by squared distance to the nearest.
	nearest := make([]float64, n)
	for i := range nearest {
		nearest[i] = math.Inf(1)
	}
	centres = append(centres, slices.Clone(vecs[rng.IntN(n)]))
	update := func(dist []float64, c []float32) (total float64) {
		for i, v := range vecs {
			dist[i] = min(nearest[i], max(0, 2-2*float64(embed.Dot(v, c))))
			total += dist[i]
		}
		return total
	}
	var total float64
	for i, v := range vecs {
		nearest[i] = max(0, 2-2*float64(embed.Dot(v, centres[0])))
		total += nearest[i]
	}
	// Greedy k-means++ (as scikit-learn's, with fewer candidates): of
	// three drawn by squared distance to the nearest centre, the one that
	// leaves the least total distance.
	const trials = 3
	trial := make([]float64, n)
	for len(centres) < k {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		best, bestTotal := -1, math.Inf(1)
		var bestDist []float64
		for range trials {
			pick := rng.Float64() * total
			chosen := n - 1
			for i, d := range nearest {
				if pick -= d; pick <= 0 {
					chosen = i
					break
				}
			}
			if t := update(trial, vecs[chosen]); t < bestTotal {
				best, bestTotal = chosen, t
				bestDist = append(bestDist[:0], trial...)
			}
		}
		centres = append(centres, slices.Clone(vecs[best]))
		copy(nearest, bestDist)
		total = bestTotal
	}
	assign := make([]int, n)
	for iter := range 25 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		changed := assignAll(vecs, centres, assign, iter == 0)
		if changed == 0 {
			break
		}
		sums := make([][]float32, k)
		for c := range sums {
			sums[c] = make([]float32, dim)
		}
		sizes := make([]int, k)
		for i, c := range assign {
			sizes[c]++
			for d, x := range vecs[i] {
				sums[c][d] += x
			}
		}
		for c := range centres {
			if sizes[c] == 0 { // an empty cluster takes a random point
				copy(centres[c], vecs[rng.IntN(n)])
				continue
			}
			embed.Normalize(sums[c])
			centres[c] = sums[c]
		}
	}
	return assign, nil
}

// assignAll gives each point its most similar centre, across the cores,
// and counts the points whose cluster changed.
func assignAll(vecs, centres [][]float32, assign []int, first bool) int {
	parts := runtime.GOMAXPROCS(0)
	changed := make([]int, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			for i := p * len(vecs) / parts; i < (p+1)*len(vecs)/parts; i++ {
				best, bc := float32(math.Inf(-1)), 0
				for c, m := range centres {
					if s := embed.Dot(vecs[i], m); s > best {
						best, bc = s, c
					}
				}
				if first || assign[i] != bc {
					changed[p]++
				}
				assign[i] = bc
			}
		})
	}
	wg.Wait()
	var total int
	for _, c := range changed {
		total += c
	}
	return total
}
