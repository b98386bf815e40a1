package embed

import (
	"maps"
	"math/rand/v2"
	"time"
)

// Which arithmetic a local model's dense layers run in is, under
// PrecisionAuto, measured on the CPU at hand rather than assumed from its
// vendor: bfloat16 doubles the float32 rate where a 512-bit FMA runs as
// two halves (AMD Zen 4) and gains little where it does not, and without
// AVX-512 only int8 goes faster than float32.

// arithmetic is what a loaded model's dense layers compute in.
type arithmetic int

const (
	arithFP32 arithmetic = iota
	arithBF16
	arithInt8
)

// precisions names each arithmetic as LocalOptions.Precision does, the most
// exact first.
var precisions = [...]Precision{arithFP32: PrecisionFP32, arithBF16: PrecisionBF16, arithInt8: PrecisionInt8} // read-only

func (a arithmetic) precision() Precision { return precisions[a] }

// arithmeticOf returns the arithmetic p names, if it names one (not auto).
func arithmeticOf(p Precision) (arithmetic, bool) {
	for a, name := range precisions {
		if name == p {
			return arithmetic(a), true
		}
	}
	return 0, false
}

// kernels are the micro-kernels one arithmetic runs on this CPU.
type kernels struct {
	arith arithmetic
	name  string     // what Choice reports: "avx2+fma", "avx512+fma", "avx512-bf16", "avx512-vnni", "avx2-u8s8", "go"…
	f32   kernel     // float32 products: attention's always, the dense layers' in fp32
	bf16  bf16Kernel // the dense layers' in bf16
	int8  int8Kernel // the dense layers' in int8
	// The wide kernels of float32 and int8 where the CPU has them.
	f32Wide  wideKernel[float32]
	int8Wide wideKernel[byte]
}

// use sets s's products, and its helpers' when they are asked for, to the
// kernels of k.
func (s *scratch) use(k *kernels) {
	s.k = k
	s.helper.use(k)
}

// use sets h's products to the kernels of k.
func (h *helper) use(k *kernels) {
	h.g.kern, h.g.wide = k.f32, k.f32Wide
	h.gb.kern = k.bf16
	h.gi.kern, h.gi.wide = k.int8, k.int8Wide
}

// kernelsFor returns the kernels of arithmetic a on this CPU: bfloat16
// needs a CPU with a bf16 kernel (ErrNoBF16); int8 falls back on the
// portable kernel.
func kernelsFor(a arithmetic) (kernels, error) {
	k := kernels{arith: a}
	k.f32, k.f32Wide, k.name = bestKernel()
	switch a {
	case arithBF16:
		var ok bool
		if k.bf16, ok = bestBF16Kernel(); !ok {
			return kernels{}, ErrNoBF16
		}
		k.name = bf16KernelName
	case arithInt8:
		k.bf16, _ = bestBF16Kernel() // for layers kept more exact
		var ok bool
		if k.int8, k.int8Wide, k.name, ok = bestInt8Kernels(); !ok {
			k.int8, k.name = kernelInt8Go, "go-int8"
		}
	}
	return k, nil
}

// Choice says what a local model's dense layers compute in and with which
// kernel.
type Choice struct {
	Precision Precision `json:"precision"`
	Kernel    string    `json:"kernel"`
	// FFNOut is, where it differs from Precision, the arithmetic of the
	// feed-forward output layers: a model that keeps them more exact under
	// int8 (see localModel.exactFFNOut) runs them in bf16 where the CPU has
	// a bf16 kernel, else in fp32.
	FFNOut Precision `json:"ffn_out,omitempty"`
	// Measured is, when the precision was auto, each candidate's rate on
	// one of the model's dense layers (64 tokens, its feed-forward input),
	// in billions of operations per second.
	Measured map[Precision]float64 `json:"measured_gops,omitempty"`
	// Recorded says the choice and its rates were read from the machine's
	// record (LocalOptions.ChoiceFile), measured there by an earlier
	// process.
	Recorded bool `json:"recorded,omitempty"`
}

// cacheKey is what tells the choice's vectors apart from other
// arithmetics' in an embedding cache: empty for float32.
func (c Choice) cacheKey() string {
	switch {
	case c.Precision == PrecisionFP32:
		return ""
	case c.Precision != PrecisionInt8:
		return string(c.Precision)
	case c.FFNOut != "":
		return int8Scheme + "+ffn-out-" + string(c.FFNOut)
	}
	return int8Scheme
}

// preferMargin is how much faster a less exact arithmetic must measure to
// be chosen over a more exact one: a margin wide enough that timing noise
// cannot flip the choice between two starts of the same machine.
const preferMargin = 1.25

// chooseArithmetic measures every arithmetic this CPU has a SIMD kernel for
// on a dense layer of the model's shape and returns the fastest, a less
// exact one only when it is preferMargin faster than the more exact, with
// the rates measured. It takes some tens of milliseconds.
func chooseArithmetic(hidden, intermediate int) (arithmetic, map[Precision]float64) {
	candidates := []arithmetic{arithFP32}
	if _, ok := bestBF16Kernel(); ok {
		candidates = append(candidates, arithBF16)
	}
	if _, _, _, ok := bestInt8Kernels(); ok {
		candidates = append(candidates, arithInt8)
	}
	w, x := measurementLayer(hidden, intermediate)
	products := make([]func() time.Duration, len(candidates))
	for i, a := range candidates {
		products[i] = timedProduct(a, w, x, hidden, intermediate)
	}
	// Rounds interleave the candidates, so that a burst of other work on
	// the machine (a build, a test run) slows each of them rather than
	// the one it happens to meet; each keeps its fastest round.
	fastest := make([]time.Duration, len(candidates))
	for round := range measureRounds {
		for i, product := range products {
			if d := product(); round == 0 || d < fastest[i] {
				fastest[i] = d
			}
		}
	}
	ops := 2 * measureRows * float64(hidden) * float64(intermediate)
	rates := make(map[Precision]float64, len(candidates))
	best, bestRate := arithFP32, 0.0
	for i, a := range candidates {
		rate := ops / max(fastest[i].Seconds(), 1e-9) / 1e9
		rates[a.precision()] = rate
		if a == arithFP32 || rate >= preferMargin*bestRate {
			best, bestRate = a, rate
		}
	}
	return best, rates
}

// measureRounds is how many times each candidate's product is timed.
const measureRounds = 5

// measureRows is the tokens of the product measured.
const measureRows = 64

// measurementLayer returns the weights (half values, as the model files
// store them) and input of the product chooseArithmetic times: random,
// one input channel 30 times the others, as a transformer's outlier
// dimensions are.
func measurementLayer(hidden, intermediate int) (tensor, []float32) {
	r := rand.New(rand.NewPCG(1, 2))
	h := make([]uint16, intermediate*hidden)
	for i := range h {
		// Sign, an exponent for magnitudes 2⁻⁹ to 2⁻⁵, any mantissa.
		h[i] = uint16(r.IntN(2))<<15 | uint16(6+r.IntN(5))<<10 | uint16(r.IntN(1<<10))
	}
	x := make([]float32, measureRows*hidden)
	for i := range x {
		x[i] = float32(r.NormFloat64())
		if i%hidden == 0 {
			x[i] *= 30
		}
	}
	return tensor{h: h}, x
}

// timedProduct returns a function timing one product of x (measureRows
// tokens) through a dense layer hidden → intermediate of weights w in
// arithmetic a, input conversion or quantisation included; it always
// returns 0 when a has no kernel here.
func timedProduct(a arithmetic, w tensor, x []float32, hidden, intermediate int) func() time.Duration {
	k, err := kernelsFor(a)
	if err != nil {
		return func() time.Duration { return 0 }
	}
	l := newLinear(w, make([]float32, intermediate), intermediate, hidden, a)
	y := make([]float32, measureRows*intermediate)
	s := &scratch{}
	s.use(&k)
	return func() time.Duration {
		start := time.Now()
		l.mul(s, x, measureRows, y, false)
		return time.Since(start)
	}
}

// Choice reports the model's arithmetic and kernel.
func (l *Local) Choice() Choice {
	c := l.model.choice
	c.Measured = maps.Clone(c.Measured)
	return c
}

// Choices returns, by model name, the Choice of every local model e runs:
// e itself, each model of a Pair, or the model a cache or an instruction
// wrapper holds; none for a remote embedder.
func Choices(e Embedder) map[string]Choice {
	out := map[string]Choice{}
	var walk func(Embedder)
	walk = func(e Embedder) {
		switch e := e.(type) {
		case *Local:
			out[e.Info().Name] = e.Choice()
		case *Pair:
			for _, m := range e.models {
				walk(m)
			}
		case instructed:
			walk(e.Embedder)
		case *Cache:
			walk(e.inner)
		}
	}
	walk(e)
	return out
}
