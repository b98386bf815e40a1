package atlas

import (
	"context"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/topk"
)

// Estimate is a mean over sampled points and its standard error.
type Estimate struct {
	Mean, SE float64
}

// estimate is the mean of xs and its standard error.
func estimate(xs []float64) Estimate {
	if len(xs) == 0 {
		return Estimate{}
	}
	m := meanOf(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	if len(xs) < 2 {
		return Estimate{Mean: m}
	}
	return Estimate{Mean: m, SE: math.Sqrt(ss / float64(len(xs)-1) / float64(len(xs)))}
}

// Preservation is how well a layout keeps the neighbourhoods of the
// vectors it was made from (Venna and Kaski): Trustworthiness penalises
// points that are near in the layout but not in the vectors, by how far
// down the vectors' ranking they are; Continuity the vectors' neighbours
// the layout moved away, by how far down the layout's ranking. 1 is
// perfect; both are estimated over the sampled points, each point's term
// against all n.
type Preservation struct {
	Trustworthiness, Continuity Estimate
}

// Preserved measures the layout y of unit vectors vecs at neighbourhood
// size k over the points sample (all when nil).
func Preserved(ctx context.Context, vecs [][]float32, y [][2]float32, k int, sample []int) (Preservation, error) {
	n := len(vecs)
	if sample == nil {
		sample = make([]int, n)
		for i := range sample {
			sample[i] = i
		}
	}
	norm := 2 / (float64(k) * float64(2*n-3*k-1))
	trust, cont := make([]float64, len(sample)), make([]float64, len(sample))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			high, low := make([]float32, n), make([]float32, n)
			for s := range jobs {
				i := sample[s]
				for j, v := range vecs {
					high[j] = embed.Dot(vecs[i], v) // higher is nearer
					dx, dy := y[i][0]-y[j][0], y[i][1]-y[j][1]
					low[j] = -(dx*dx + dy*dy)
				}
				high[i], low[i] = float32(math.Inf(-1)), float32(math.Inf(-1))
				hn, ln := nearestOf(high, k), nearestOf(low, k)
				var t, c float64
				for _, j := range ln {
					if !slices.Contains(hn, j) {
						t += float64(rankOf(high, j) - k)
					}
				}
				for _, j := range hn {
					if !slices.Contains(ln, j) {
						c += float64(rankOf(low, j) - k)
					}
				}
				trust[s], cont[s] = 1-norm*t, 1-norm*c
			}
		})
	}
	var err error
	for s := range sample {
		if err = ctx.Err(); err != nil {
			break
		}
		jobs <- s
	}
	close(jobs)
	wg.Wait()
	if err != nil {
		return Preservation{}, err
	}
	return Preservation{Trustworthiness: estimate(trust), Continuity: estimate(cont)}, nil
}

// nearestOf is the indices of the k highest scores.
func nearestOf(score []float32, k int) []int {
	t := topk.New(k)
	for j, s := range score {
		t.Push(j, s)
	}
	out := make([]int, 0, k)
	for _, nb := range t.Sorted() {
		out = append(out, nb.Index)
	}
	return out
}

// rankOf is j's rank by score, 1 for the highest (ties broken by index,
// as nearestOf breaks them).
func rankOf(score []float32, j int) int {
	r := 1
	for m, s := range score {
		if s > score[j] || s == score[j] && m < j {
			r++
		}
	}
	return r
}

// AMI is the adjusted mutual information of two labellings of the same
// points (Vinh, Epps and Bailey 2010), normalised by the arithmetic mean
// of their entropies: 1 when they agree, about 0 when they agree no more
// than chance would.
func AMI[A, B comparable](a []A, b []B) float64 {
	n := len(a)
	if n == 0 || len(b) != n {
		return 0
	}
	ai, bi := map[A]int{}, map[B]int{}
	for _, x := range a {
		if _, ok := ai[x]; !ok {
			ai[x] = len(ai)
		}
	}
	for _, x := range b {
		if _, ok := bi[x]; !ok {
			bi[x] = len(bi)
		}
	}
	rows, cols := make([]int, len(ai)), make([]int, len(bi))
	cell := make([]int, len(ai)*len(bi))
	for p := range a {
		r, c := ai[a[p]], bi[b[p]]
		rows[r]++
		cols[c]++
		cell[r*len(bi)+c]++
	}
	if len(rows) == 1 && len(cols) == 1 || len(rows) == n && len(cols) == n {
		return 1
	}
	N := float64(n)
	var mi float64
	for r, ar := range rows {
		for c, bc := range cols {
			if nij := float64(cell[r*len(cols)+c]); nij > 0 {
				mi += nij / N * math.Log(N*nij/(float64(ar)*float64(bc)))
			}
		}
	}
	entropy := func(sizes []int) float64 {
		var h float64
		for _, s := range sizes {
			p := float64(s) / N
			h -= p * math.Log(p)
		}
		return h
	}
	emi := expectedMI(rows, cols, n)
	den := (entropy(rows)+entropy(cols))/2 - emi
	if math.Abs(den) < 1e-15 {
		return 0
	}
	return (mi - emi) / den
}

// expectedMI is the mutual information two random labellings with these
// cluster sizes have on average (the hypergeometric model).
func expectedMI(rows, cols []int, n int) float64 {
	N := float64(n)
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v } // log x!
	lgN := lg(n)
	var emi float64
	for _, a := range rows {
		for _, b := range cols {
			start := max(1, a+b-n)
			for nij := start; nij <= min(a, b); nij++ {
				term := float64(nij) / N * math.Log(N*float64(nij)/(float64(a)*float64(b)))
				logP := lg(a) + lg(b) + lg(n-a) + lg(n-b) - lgN - lg(nij) - lg(a-nij) - lg(b-nij) - lg(n-a-b+nij)
				emi += term * math.Exp(logP)
			}
		}
	}
	return emi
}
