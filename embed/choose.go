package embed

import (
	"fmt"
	"maps"
	"slices"
)

// Which arithmetic and which micro-kernels a local model's products run
// on is, under PrecisionAuto, measured on the CPU at hand rather than
// assumed from its vendor: bfloat16 doubles the float32 rate where a
// 512-bit FMA runs as two halves (AMD Zen 4) and loses to float32 where
// two FMA ports run it whole (Intel Xeon); a kernel of 512-bit tiles may
// or may not beat one of 256-bit tiles; without AVX-512 only int8 goes
// faster than float32. Every candidate is timed on the model's own
// shapes and the fastest kept.

// arithmetic is what a loaded model's dense layers compute in.
type arithmetic int

const (
	arithFP32 arithmetic = iota
	arithBF16
	arithInt8
)

// precisions names each arithmetic as LocalOptions.Precision does.
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

// kernels is one way to run an arithmetic on this CPU: its micro-kernels,
// and the float32 ones its products use beside them (an int8 product's
// outlier channels).
type kernels struct {
	arith arithmetic
	name  string     // what Choice reports: "avx2+fma", "avx512+fma", "avx512-bf16", "avx512-vnni", "avx2-u8s8", "go"…
	f32   kernel     // float32 products
	bf16  bf16Kernel // bfloat16 products, in a bf16 set
	int8  int8Kernel // int8 products, in an int8 set
	// The wide kernels of float32 and int8 where the set has them.
	f32Wide  wideKernel[float32]
	int8Wide wideKernel[byte]
	// int8AMX and bf16AMX send an int8 or bf16 product's whole blocks to
	// the AMX kernel.
	int8AMX, bf16AMX bool
	// fmaSums says f32 sums each product from zero by FMA, in k's order
	// (every SIMD set's does), as the fused passes that stand in for it
	// do: an int8 product's outlier channels (outlierProductSIMD), a
	// short sequence's attention (attendSmallSIMD).
	fmaSums bool
	// fusedOutliers lets an int8 product add its outlier channels' share
	// in one pass (outlierProductSIMD), where f32 sums by FMA.
	fusedOutliers bool
}

// use sets h's products to the kernels of k.
func (h *helper) use(k *kernels) {
	h.g.kern, h.g.wide, h.fmaSums = k.f32, k.f32Wide, k.fmaSums
	h.gb.kern, h.gb.amx = k.bf16, k.bf16AMX
	h.gi.kern, h.gi.wide, h.gi.amx = k.int8, k.int8Wide, k.int8AMX
}

// portableKernels returns arithmetic a's kernels in Go, the reference the
// SIMD ones are tested against; bfloat16 has none.
func portableKernels(a arithmetic) (kernels, bool) {
	switch a {
	case arithFP32:
		return kernels{arith: arithFP32, name: "go", f32: kernelGo}, true
	case arithInt8:
		return kernels{arith: arithInt8, name: "go-int8", f32: kernelGo, int8: kernelInt8Go}, true
	}
	return kernels{}, false
}

// simdOf returns the SIMD kernel sets of arithmetic a this CPU has
// (simdKernels), the likeliest fastest first.
func simdOf(a arithmetic) []kernels {
	var out []kernels
	for _, k := range simdKernels() {
		if k.arith == a {
			out = append(out, k)
		}
	}
	return out
}

// candidates returns the kernel sets arithmetic a can run on here: its
// SIMD ones, else the portable one; none for bfloat16 without a bf16
// kernel.
func candidates(a arithmetic) []kernels {
	if c := simdOf(a); len(c) > 0 {
		return c
	}
	if k, ok := portableKernels(a); ok {
		return []kernels{k}
	}
	return nil
}

// Choice says what a local model's products compute in and with which
// kernels.
type Choice struct {
	// Precision and Kernel are the dense layers' arithmetic and kernels.
	Precision Precision `json:"precision"`
	Kernel    string    `json:"kernel"`
	// FFNOut and FFNOutKernel are, where they differ from Precision and
	// Kernel, those of the feed-forward output layers: a model that keeps
	// them more exact under int8 (see localModel.exactFFNOut) runs them in
	// whichever of fp32 and bf16 measured faster (bf16 only when
	// preferMargin faster).
	FFNOut       Precision `json:"ffn_out,omitempty"`
	FFNOutKernel string    `json:"ffn_out_kernel,omitempty"`
	// Attention is the kernels of attention's two products: a float32
	// set, or a bf16 one (amx-bf16, avx512-bf16) where it measured
	// preferMargin faster; AttentionPrecision is then bf16.
	Attention          string    `json:"attention_kernel"`
	AttentionPrecision Precision `json:"attention,omitempty"`
	// Measured is each candidate's rate, in billions of operations per
	// second, keyed "role:precision/kernel": "dense:" on one layer of the
	// model's shape (its four dense products at 48 and 16 tokens),
	// "ffn-out:" on its feed-forward output product alone, "attention:" on
	// one layer's attention at 224 and 16 tokens. Empty when there was nothing to choose
	// between.
	Measured map[string]float64 `json:"measured_gops,omitempty"`
	// Recorded says the rates were read from the machine's record
	// (LocalOptions.ChoiceFile), measured there by an earlier process.
	Recorded bool `json:"recorded,omitempty"`
}

// cacheKey is what tells the choice's vectors apart from other
// arithmetics' in an embedding cache: empty for float32 throughout.
// (Kernels of one arithmetic compute the same products; only the
// arithmetic shows.)
func (c Choice) cacheKey() string {
	key := int8Scheme
	switch {
	case c.Precision == PrecisionFP32:
		key = ""
	case c.Precision != PrecisionInt8:
		key = string(c.Precision)
	case c.FFNOut != "":
		key += "+ffn-out-" + string(c.FFNOut)
	}
	switch c.AttentionPrecision {
	case "":
	case PrecisionBF16:
		key += "+attention-" + attentionBF16Scheme
	default:
		key += "+attention-" + string(c.AttentionPrecision)
	}
	return key
}

// preferMargin is how much faster a less exact arithmetic must measure to
// be chosen over a more exact one: a margin wide enough that timing noise
// cannot flip the choice between two starts of the same machine.
const preferMargin = 1.25

// The roles a kernel set is measured in.
const (
	roleDense     = "dense"
	roleFFNOut    = "ffn-out"
	roleAttention = "attention"
)

// rateKey is k's entry in role in a measurement.
func rateKey(role string, k kernels) string {
	return role + ":" + string(k.arith.precision()) + "/" + k.name
}

// modelShape is what a measurement depends on.
type modelShape struct{ hidden, intermediate, heads int }

func (m *bert) shape() modelShape {
	return modelShape{m.cfg.Hidden, m.cfg.Intermediate, m.cfg.Heads}
}

// plan is the kernels each of a model's products runs on.
type plan struct {
	dense, ffnOut, attention kernels
}

// choosePlan returns the plan of a model under precision p ("" or auto
// for the fastest) from the candidates' rates: the dense layers in the
// fastest arithmetic measured (a less exact one only when preferMargin
// faster than the more exact) on its fastest kernels, or in p on its
// fastest; the feed-forward output layers likewise among fp32 and bf16
// when the dense layers run in int8 and the model keeps them more exact
// (exactFFNOut), else as the dense ones; attention likewise among fp32
// and bf16, unless p is fp32. A candidate without a rate counts as the slowest. bf16 asked
// of a CPU without it is ErrNoBF16.
func choosePlan(rates map[string]float64, p Precision, exactFFNOut bool) (plan, error) {
	dense, ffnOut, attention := measured()
	if a, ok := arithmeticOf(p); ok {
		if dense = candidates(a); len(dense) == 0 {
			return plan{}, ErrNoBF16
		}
		if a == arithFP32 {
			attention = dense // float32 asked for: float32 throughout
		}
	}
	var pl plan
	pl.dense = fastest(rates, roleDense, dense)
	pl.ffnOut = pl.dense
	if pl.dense.arith == arithInt8 && exactFFNOut {
		pl.ffnOut = fastest(rates, roleFFNOut, ffnOut)
	}
	pl.attention = fastest(rates, roleAttention, attention)
	return pl, nil
}

// fastest returns the fastest in role of sets (not empty), listed the
// most exact arithmetic first: of one arithmetic's sets the fastest (the
// first on a tie), of a less exact arithmetic's only when preferMargin
// faster than the more exact chosen.
func fastest(rates map[string]float64, role string, sets []kernels) kernels {
	best, bestRate := sets[0], rates[rateKey(role, sets[0])]
	for _, k := range sets[1:] {
		r := rates[rateKey(role, k)]
		if k.arith == best.arith && r > bestRate || k.arith != best.arith && r > 0 && r >= preferMargin*bestRate {
			best, bestRate = k, r
		}
	}
	return best
}

// measured lists the kernel sets a measurement times in each role, the
// most exact arithmetic first: in the dense role every candidate of
// float32 and every SIMD one of bf16 and int8 (the portable int8 kernel
// is no faster than float32's: run when asked for, never chosen); in the
// feed-forward output role and in attention the float32 and bf16 ones.
func measured() (dense, ffnOut, attention []kernels) {
	ffnOut = append(candidates(arithFP32), simdOf(arithBF16)...)
	attention = slices.Clone(ffnOut)
	dense = append(slices.Clone(ffnOut), simdOf(arithInt8)...)
	return dense, ffnOut, attention
}

// worthMeasuring reports whether any role has more than one candidate.
func worthMeasuring() bool {
	dense, _, _ := measured()
	return len(dense) > 1
}

// Choice reports the model's arithmetic and kernels.
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

// choose sets m's plan and choice for precision p (see loadBERT).
func (m *bert) choose(p Precision, exactFFNOut bool, given *measurement, choiceFile string, warn func(error)) error {
	if _, ok := arithmeticOf(p); !ok && p != "" && p != PrecisionAuto {
		return fmt.Errorf("precision %q: want auto, fp32, bf16 or int8", string(p))
	}
	var meas measurement
	switch {
	case given != nil && given.shape == m.shape():
		meas = *given
	case worthMeasuring():
		var err error
		if meas, err = autoRates(choiceFile, m.shape()); err != nil {
			warn(err)
		}
	}
	pl, err := choosePlan(meas.rates, p, exactFFNOut)
	if err != nil {
		return err
	}
	m.plan = pl
	m.choice = Choice{Precision: pl.dense.arith.precision(), Kernel: pl.dense.name, Attention: pl.attention.name,
		Measured: maps.Clone(meas.rates), Recorded: meas.recorded}
	if pl.ffnOut.arith != pl.dense.arith {
		m.choice.FFNOut = pl.ffnOut.arith.precision()
	}
	if pl.ffnOut.name != pl.dense.name {
		m.choice.FFNOutKernel = pl.ffnOut.name
	}
	if pl.attention.arith != arithFP32 {
		m.choice.AttentionPrecision = pl.attention.arith.precision()
	}
	return nil
}

// measurement is the rates a plan was chosen from, of one model shape, and
// whether they were read from the machine's record.
type measurement struct {
	shape    modelShape
	rates    map[string]float64
	recorded bool
}

// measurement returns the rates m's plan was chosen from.
func (m *bert) measurement() *measurement {
	return &measurement{shape: m.shape(), rates: m.choice.Measured, recorded: m.choice.Recorded}
}
