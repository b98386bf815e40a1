package embed

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Timing every candidate kernel set on a model's own shapes (see
// choosePlan for what is made of the rates).

// measureRounds is how many times each candidate is timed.
const measureRounds = 3

// measureRows are the tokens of the products timed: an abstract's share
// of a layer and a short query.
var measureRows = [...]int{48, 16} // read-only

// attentionRows are the sequence lengths attention is timed at: an
// abstract's (about 230 word pieces with its title; attention's cost
// grows with the square of it, and its kernels rank differently at 48)
// and a short query's.
var attentionRows = [...]int{224, 16} // read-only

// measure times every candidate of measured() on a model of this shape:
// the dense ones on one layer's four dense products, the fp32 and bf16
// ones on the feed-forward output product alone as well and on one
// layer's attention at attentionRows, the rest at measureRows, and
// returns their rates in billions of operations per second by rateKey.
// A dense set whose products disagree with the first set's (a kernel that
// computes wrongly on this CPU) is rated 0 in every role, never to be
// chosen. It takes about a tenth of a second.
func measure(s modelShape) map[string]float64 {
	dense, _, attention := measured()
	h, in := s.hidden, s.intermediate
	// qkv, attention output, ffn in, ffn out
	products := [...]measurementProduct{newMeasurementProduct(h, 3*h), newMeasurementProduct(h, h),
		newMeasurementProduct(h, in), newMeasurementProduct(in, h)}
	const ffnOutProduct = 3
	type timed struct {
		run   func() [len(products)]time.Duration
		best  [len(products)]time.Duration
		k     kernels
		dense bool
		out   [][]float32 // a dense set's products of the last rows timed
	}
	var all []*timed
	packed := map[arithmetic][]linear{} // one arithmetic's sets share its packed weights
	for _, k := range dense {
		if packed[k.arith] == nil {
			for _, p := range products {
				packed[k.arith] = append(packed[k.arith], newLinear(p.w, make([]float32, p.out), p.out, p.in, &k))
			}
		}
		run, out := timedLayer(k, packed[k.arith], products[:])
		all = append(all, &timed{run: run, k: k, dense: true, out: out})
	}
	for _, k := range attention {
		run := timedAttention(k, s)
		all = append(all, &timed{run: func() (d [len(products)]time.Duration) { d[0] = run(); return d }, k: k})
	}
	// Rounds interleave the candidates, so that a burst of other work on
	// the machine (a build, a test run) slows each of them rather than
	// the one it happens to meet; each keeps its fastest round.
	for round := range measureRounds {
		for _, t := range all {
			d := t.run()
			for i := range d {
				if round == 0 || d[i] < t.best[i] {
					t.best[i] = d[i]
				}
			}
		}
	}
	rows := 0
	for _, r := range measureRows {
		rows += r
	}
	rate := func(ops float64, d time.Duration) float64 { return ops / max(d.Seconds(), 1e-9) / 1e9 }
	rates := map[string]float64{}
	for _, t := range all {
		if !t.dense {
			r := rate(attentionOps(s), t.best[0])
			if d, ok := rates[rateKey(roleDense, t.k)]; ok && d == 0 {
				r = 0 // its products disagreed (the dense sets are rated first)
			}
			rates[rateKey(roleAttention, t.k)] = r
			continue
		}
		var ops float64
		var total time.Duration
		for i, p := range products {
			ops += 2 * float64(rows) * float64(p.in) * float64(p.out)
			total += t.best[i]
		}
		r := rate(ops, total)
		if !agrees(t.out, all[0].out) {
			r = 0
		}
		rates[rateKey(roleDense, t.k)] = r
		if t.k.arith != arithInt8 {
			p := products[ffnOutProduct]
			ffn := rate(2*float64(rows)*float64(p.in)*float64(p.out), t.best[ffnOutProduct])
			if r == 0 {
				ffn = 0
			}
			rates[rateKey(roleFFNOut, t.k)] = ffn
		}
	}
	return rates
}

// agrees reports whether each of the products got has cosine at least
// 0.99 to want's: far looser than any arithmetic's rounding (int8's
// measure about 0.9999 here), far tighter than a kernel that reads or
// writes the wrong elements.
func agrees(got, want [][]float32) bool {
	for i := range want {
		var gw, gg, ww float64
		for j, w := range want[i] {
			g := float64(got[i][j])
			gw, gg, ww = gw+g*float64(w), gg+g*g, ww+float64(w)*float64(w)
		}
		if !(gw >= 0.99*math.Sqrt(gg*ww)) || (gg > 0) != (ww > 0) {
			return false
		}
	}
	return true
}

// attentionOps is the multiply-adds, times two, of one layer's attention
// over attentionRows tokens: q·kᵀ and the scores times v for every head.
func attentionOps(s modelShape) float64 {
	var ops float64
	for _, seq := range attentionRows {
		ops += 2 * 2 * float64(seq) * float64(seq) * float64(s.hidden)
	}
	return ops
}

// timedLayer returns a function timing each of products, packed for k's
// arithmetic in layers, on kernels k at every measureRows, input
// conversion or quantisation included, and where each writes its last
// rows' products.
func timedLayer(k kernels, layers []linear, products []measurementProduct) (func() [4]time.Duration, [][]float32) {
	rows := slices.Max(measureRows[:])
	layers = slices.Clone(layers)
	ys := make([][]float32, len(products))
	for i, p := range products {
		layers[i].k = &k
		ys[i] = make([]float32, rows*p.out)
	}
	s := &scratch{}
	return func() (d [4]time.Duration) {
		for i := range layers {
			start := time.Now()
			for _, r := range measureRows {
				layers[i].mul(s, products[i].x, r, ys[i], false)
			}
			d[i] = time.Since(start)
		}
		return d
	}, last(ys, products)
}

// last returns the part of each product's output the last of measureRows
// writes.
func last(ys [][]float32, products []measurementProduct) [][]float32 {
	out := make([][]float32, len(ys))
	for i, y := range ys {
		out[i] = y[:measureRows[len(measureRows)-1]*products[i].out]
	}
	return out
}

// timedAttention returns a function timing one layer's attention on
// kernels k at every attentionRows tokens.
func timedAttention(k kernels, s modelShape) func() time.Duration {
	rows := slices.Max(attentionRows[:])
	h := s.hidden
	dh := h / s.heads
	r := rand.New(rand.NewPCG(3, 4))
	qkv := make([]float32, rows*3*h)
	for i := range qkv {
		qkv[i] = float32(r.NormFloat64())
	}
	ctx := make([]float32, rows*h)
	var p helper
	p.use(&k)
	var qkvb []uint16
	return func() time.Duration {
		start := time.Now()
		for _, seq := range attentionRows {
			qkvb = attentionInput(&k, qkv[:seq*3*h], qkvb)
			for hd := range s.heads {
				p.attend(qkv, qkvb, hd, dh, h, seq, seq, 0.17, ctx[hd*dh:])
			}
		}
		return time.Since(start)
	}
}

// measurementProduct is a dense layer in → out to time: its weights
// (half values, as the model files store them) and the largest
// measureRows of input, random, one input channel 30 times the others,
// as a transformer's outlier dimensions are.
type measurementProduct struct {
	in, out int
	w       tensor
	x       []float32
}

func newMeasurementProduct(in, out int) measurementProduct {
	r := rand.New(rand.NewPCG(uint64(in), uint64(out)))
	h := make([]uint16, out*in)
	for i := 0; i < len(h); i += 4 {
		bits := r.Uint64()
		for j := i; j < min(i+4, len(h)); j++ {
			// Sign, an exponent for magnitudes 2⁻⁹ to 2⁻⁵ (6 + 0..4, from
			// three bits mod 5), any mantissa.
			h[j] = uint16(bits>>15&1)<<15 | uint16(6+(bits>>10&7)%5)<<10 | uint16(bits&(1<<10-1))
			bits >>= 16
		}
	}
	x := make([]float32, slices.Max(measureRows[:])*in)
	for i := range x {
		x[i] = float32(r.NormFloat64())
		if i%in == 0 {
			x[i] *= 30
		}
	}
	return measurementProduct{in: in, out: out, w: tensor{h: h}, x: x}
}
