package atlas

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// LayoutOptions tune Layout; the zero value is the default.
type LayoutOptions struct {
	// Epochs of optimisation (default: 200 for over 10,000 points, 500
	// below, as UMAP's).
	Epochs int
	// Seed makes a layout repeatable (the same points, seed and options
	// give the same layout).
	Seed uint64
	// PCAOnly stops at the starting point, the vectors' first two
	// principal components: a baseline to measure the layout against.
	PCAOnly bool
}

// Step is a stage of Layout, reported with its progress.
type Step string

// Layout's stages.
const (
	StepInit     Step = "initial layout"
	StepOptimise Step = "optimising"
)

// Curve parameters of UMAP's low-dimensional similarity 1/(1+a·d^2b) for
// min_dist 0.1 and spread 1, the values its curve fit gives.
const (
	curveA = 1.576943460405378
	curveB = 0.8950608781227859
	// negativeRate is how many random points push a point away for each
	// neighbour that pulls it.
	negativeRate = 5
	// maxStep bounds one gradient step in one coordinate.
	maxStep = 4
)

// ErrTooFew is the error of a layout of fewer than two points.
var ErrTooFew = errors.New("a layout needs at least two points")

// Layout places every point of a neighbour graph (Neighbours of unit
// vectors) in the plane so that neighbours stay near: UMAP's fuzzy
// neighbour graph, optimised by its attraction along the graph's edges
// and repulsion from random points, from the vectors' two principal
// components. Coordinates are in [0, 1]. progress, if not nil, is told
// each stage and how far it is.
func Layout(ctx context.Context, vecs [][]float32, graph [][]Neighbour, opts LayoutOptions, progress func(Step, int, int)) ([][2]float32, error) {
	n := len(vecs)
	if n < 2 {
		return nil, ErrTooFew
	}
	if len(graph) != n {
		return nil, fmt.Errorf("layout: %d neighbour lists for %d points", len(graph), n)
	}
	if progress == nil {
		progress = func(Step, int, int) {}
	}
	epochs := opts.Epochs
	if epochs <= 0 {
		epochs = 500
		if n > 10000 {
			epochs = 200
		}
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x5eed))
	progress(StepInit, 0, 1)
	y := principal(vecs, rng)
	progress(StepInit, 1, 1)
	if opts.PCAOnly {
		return unitSquare(y), nil
	}
	edges := fuzzyEdges(graph, epochs)
	if err := optimise(ctx, y, edges, epochs, rng, progress); err != nil {
		return nil, err
	}
	return unitSquare(y), nil
}

// edge is a directed edge of the fuzzy graph and when it is next sampled.
type edge struct {
	from, to int32
	// every is the epochs between samples (the strongest edge is sampled
	// every epoch), next the epoch of the next sample, and negEvery and
	// negNext the same for its negative samples.
	every, next, negEvery, negNext float32
}

// fuzzyEdges is UMAP's fuzzy simplicial set of the graph, each
// membership as a sampling rate: point i's neighbour at cosine distance d
// has membership exp(-(d-ρᵢ)/σᵢ), ρᵢ the distance of its nearest and σᵢ
// set so the memberships sum to log2 k; the two directions combine as
// a+b-ab. Edges too weak to be sampled once in the epochs are dropped.
func fuzzyEdges(graph [][]Neighbour, epochs int) []edge {
	type pair struct{ a, b int32 }
	weight := map[pair]float64{}
	for i, ns := range graph {
		if len(ns) == 0 {
			continue
		}
		dist := make([]float64, len(ns))
		for j, nb := range ns {
			dist[j] = max(0, 1-float64(nb.Score))
		}
		rho := dist[0]
		for _, d := range dist {
			if d > 0 {
				rho = d
				break
			}
		}
		sigma := smoothSigma(dist, rho, math.Log2(float64(len(ns))))
		for j, nb := range ns {
			w := math.Exp(-max(0, dist[j]-rho) / sigma)
			p := pair{int32(i), int32(nb.Index)}
			if p.a > p.b {
				p.a, p.b = p.b, p.a
			}
			if old, ok := weight[p]; ok {
				w = old + w - old*w
			}
			weight[p] = w
		}
	}
	var top float64
	for _, w := range weight {
		top = max(top, w)
	}
	edges := make([]edge, 0, 2*len(weight))
	for p, w := range weight {
		if w < top/float64(epochs) {
			continue
		}
		every := float32(top / w)
		edges = append(edges, edge{from: p.a, to: p.b, every: every, next: every, negEvery: every / negativeRate, negNext: every / negativeRate},
			edge{from: p.b, to: p.a, every: every, next: every, negEvery: every / negativeRate, negNext: every / negativeRate})
	}
	// Map order is random: sort for a repeatable optimisation.
	slices.SortFunc(edges, func(x, y edge) int {
		if x.from != y.from {
			return int(x.from - y.from)
		}
		return int(x.to - y.to)
	})
	return edges
}

// smoothSigma finds by bisection the σ with Σ exp(-max(0, d-ρ)/σ) = target.
func smoothSigma(dist []float64, rho, target float64) float64 {
	lo, hi, mid := 0.0, math.Inf(1), 1.0
	for range 64 {
		var sum float64
		for _, d := range dist[1:] {
			sum += math.Exp(-max(0, d-rho) / mid)
		}
		if math.Abs(sum-target) < 1e-5 {
			break
		}
		if sum > target {
			hi = mid
			mid = (lo + hi) / 2
		} else {
			lo = mid
			if math.IsInf(hi, 1) {
				mid *= 2
			} else {
				mid = (lo + hi) / 2
			}
		}
	}
	return max(mid, 1e-3*meanOf(dist))
}

func meanOf(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// optimise moves the points by stochastic gradient descent on UMAP's
// cross-entropy: each edge, when due, pulls its two ends together and
// pushes its source from negativeRate random points; the step shrinks
// linearly to nothing over the epochs.
func optimise(ctx context.Context, y [][2]float32, edges []edge, epochs int, rng *rand.Rand, progress func(Step, int, int)) error {
	n := len(y)
	clip := func(g float32) float32 { return max(-maxStep, min(maxStep, g)) }
	for epoch := range epochs {
		if err := ctx.Err(); err != nil {
			return err
		}
		progress(StepOptimise, epoch, epochs)
		alpha := 1 - float32(epoch)/float32(epochs)
		now := float32(epoch)
		for i := range edges {
			e := &edges[i]
			if e.next > now {
				continue
			}
			cur, other := &y[e.from], &y[e.to]
			dx, dy := cur[0]-other[0], cur[1]-other[1]
			d2 := dx*dx + dy*dy
			if d2 > 0 {
				pb := powB(d2) // d2^b; d2^(b-1) is pb/d2
				g := -2 * curveA * curveB * (pb / d2) / (curveA*pb + 1)
				gx, gy := clip(g*dx)*alpha, clip(g*dy)*alpha
				cur[0] += gx
				cur[1] += gy
				other[0] -= gx
				other[1] -= gy
			}
			e.next += e.every
			negatives := int((now - e.negNext) / e.negEvery)
			for range max(0, negatives) {
				k := rng.IntN(n)
				if k == int(e.from) {
					continue
				}
				other := &y[k]
				dx, dy := cur[0]-other[0], cur[1]-other[1]
				d2 := dx*dx + dy*dy
				if d2 <= 0 {
					continue
				}
				g := 2 * curveB / ((0.001 + d2) * (curveA*powB(d2) + 1))
				cur[0] += clip(g*dx) * alpha
				cur[1] += clip(g*dy) * alpha
			}
			e.negNext += float32(max(0, negatives)) * e.negEvery
		}
	}
	progress(StepOptimise, epochs, epochs)
	return nil
}

// powB is x^curveB for x > 0, to about 3e-5 relative: 2^(b·log2 x), each
// side by a least-squares degree-5 polynomial (log2 on the float's
// mantissa, 2^f on the fraction), a fraction of math.Pow's time
// (the optimisation computes it hundreds of millions of times, and its
// steps are noisy far beyond that error).
func powB(x float32) float32 {
	bits := math.Float32bits(x)
	e := float32(int32(bits>>23&0xff) - 127)
	m := math.Float32frombits(bits&0x7fffff | 0x3f800000) // [1, 2)
	l := -2.7868130 + m*(5.0468760+m*(-3.4924943+m*(1.5939014+m*(-0.40486717+m*0.043428908))))
	y := curveB * (e + l)
	// 2^y = 2^i · 2^f, f in [0, 1).
	i := float32(math.Floor(float64(y)))
	f := y - i
	p := 0.99999977 + f*(0.69315678+f*(0.24013169+f*(0.055876557+f*(0.0089405825+f*0.0018943794))))
	if i < -126 {
		return 0
	}
	return math.Float32frombits(uint32(int32(i)+127)<<23) * p
}

// principal projects the vectors on their first two principal components
// (by power iteration on the centred data), scaled so the widest
// coordinate is 10, with a little noise so no two points coincide: the
// layout's starting point.
func principal(vecs [][]float32, rng *rand.Rand) [][2]float32 {
	n, dim := len(vecs), len(vecs[0])
	mean := make([]float64, dim)
	for _, v := range vecs {
		for d, x := range v {
			mean[d] += float64(x)
		}
	}
	for d := range mean {
		mean[d] /= float64(n)
	}
	project := func(v []float32, dir []float64) float64 {
		var s float64
		for d, x := range v {
			s += (float64(x) - mean[d]) * dir[d]
		}
		return s
	}
	var comps [][]float64
	for range 2 {
		dir := make([]float64, dim)
		for d := range dir {
			dir[d] = rng.NormFloat64()
		}
		for range 100 {
			next := make([]float64, dim)
			for _, v := range vecs {
				p := project(v, dir)
				for d, x := range v {
					next[d] += p * (float64(x) - mean[d])
				}
			}
			for _, c := range comps { // deflate: stay orthogonal to the first
				var dot float64
				for d := range next {
					dot += next[d] * c[d]
				}
				for d := range next {
					next[d] -= dot * c[d]
				}
			}
			norm := math.Sqrt(dotf64(next, next))
			if norm == 0 {
				break
			}
			var change float64
			for d := range next {
				next[d] /= norm
				change += math.Abs(next[d] - dir[d])
			}
			dir = next
			if change < 1e-6 {
				break
			}
		}
		comps = append(comps, dir)
	}
	y := make([][2]float32, n)
	var widest float64
	for i, v := range vecs {
		a, b := project(v, comps[0]), project(v, comps[1])
		y[i] = [2]float32{float32(a), float32(b)}
		widest = max(widest, math.Abs(a), math.Abs(b))
	}
	scale := float32(10 / max(widest, 1e-12))
	for i := range y {
		y[i][0] = y[i][0]*scale + float32(rng.NormFloat64()*1e-4)
		y[i][1] = y[i][1]*scale + float32(rng.NormFloat64()*1e-4)
	}
	return y
}

func dotf64(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// unitSquare scales and shifts y into [0, 1]², keeping its aspect.
func unitSquare(y [][2]float32) [][2]float32 {
	lo := [2]float32{float32(math.Inf(1)), float32(math.Inf(1))}
	hi := [2]float32{float32(math.Inf(-1)), float32(math.Inf(-1))}
	for _, p := range y {
		for d := range 2 {
			lo[d], hi[d] = min(lo[d], p[d]), max(hi[d], p[d])
		}
	}
	span := max(hi[0]-lo[0], hi[1]-lo[1], 1e-12)
	out := make([][2]float32, len(y))
	for i, p := range y {
		for d := range 2 {
			// Centre the narrower side.
			out[i][d] = (p[d]-lo[d])/span + (1-(hi[d]-lo[d])/span)/2
		}
	}
	return out
}
