package embed

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestFastMath(t *testing.T) {
	var maxExp, maxErf float64
	for x64 := -30.0; x64 <= 30; x64 += 0.001 {
		x := float64(float32(x64)) // the functions see float32 inputs
		want := math.Exp(x)
		if rel := math.Abs(float64(expf(float32(x)))-want) / want; rel > maxExp {
			maxExp = rel
		}
		if d := math.Abs(float64(erff(float32(x))) - math.Erf(x)); d > maxErf {
			maxErf = d
		}
	}
	if maxExp > 3e-6 || maxErf > 5e-7 {
		t.Errorf("max relative error of expf %.3g (want <= 3e-6), max absolute error of erff %.3g (want <= 5e-7)", maxExp, maxErf)
	}
	t.Logf("expf max relative error %.3g, erff max absolute error %.3g", maxExp, maxErf)
	if expf(-100) != 0 || !math.IsInf(float64(expf(100)), 1) {
		t.Error("expf out of range")
	}
}

// TestElementwiseSIMD checks expShifted, expShiftedBF16 and gelu, AVX-512 or AVX2 where
// the CPU has it, against their Go definitions on lengths that exercise
// the full blocks and the tail, and on values past exp's range.
func TestElementwiseSIMD(t *testing.T) {
	_, simd := expShiftedSIMD(make([]float32, 16), 1)
	t.Logf("SIMD element-wise kernels: %v", simd)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 15, 16, 17, 31, 32, 33, 48, 49, 221, 512} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 4)
		}
		x[rng.IntN(n)] = -300 // e^(-300·scale) underflows
		want := append([]float32(nil), x...)
		got := append([]float32(nil), x...)
		wantSum := expShiftedGo(want, 0.18)
		gotSum := expShifted(got, 0.18)
		var sum, top float64
		for i := range got {
			sum += float64(got[i])
			top = max(top, float64(got[i]))
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-6*float64(want[i])+1e-9 {
				t.Errorf("exp n=%d [%d]: %g, want %g", n, i, got[i], want[i])
				break
			}
		}
		if math.Abs(float64(gotSum)-sum) > 1e-5*sum || math.Abs(float64(gotSum-wantSum)) > 1e-5*sum || top != 1 {
			t.Errorf("exp n=%d: sum %g (Go %g, of the values %g), largest %g, want 1", n, gotSum, wantSum, sum, top)
		}

		// Rounded to bf16 as they are computed: as the Go exponentials
		// rounded, but where the two exps straddle a rounding boundary
		// (one bf16 step), and nothing written past n.
		bf := make([]uint16, n+1)
		bf[n] = 0xbeef
		bfSum := expShiftedBF16(bf[:n], append([]float32(nil), x...), 0.18)
		for i, w := range want {
			if d := int(bf[i]) - int(toBF16(w)); d < -1 || d > 1 {
				t.Errorf("exp to bf16 n=%d [%d]: %#x, want %#x (%g)", n, i, bf[i], toBF16(w), w)
				break
			}
		}
		if math.Abs(float64(bfSum-wantSum)) > 1e-5*sum || bf[n] != 0xbeef {
			t.Errorf("exp to bf16 n=%d: sum %g, want %g; past the end %#x", n, bfSum, wantSum, bf[n])
		}

		for i := range x {
			x[i] = float32(rng.NormFloat64() * 3)
		}
		x[0], x[n-1] = -40, 40
		b := make([]float32, n)
		for i := range b {
			b[i] = float32(rng.NormFloat64() * 0.5)
		}
		want = append(want[:0], x...)
		got = append(got[:0], x...)
		for i := range want {
			want[i] += b[i]
		}
		geluGo(want)
		biasGELU(got, b)
		for i := range got {
			if d := math.Abs(float64(got[i] - want[i])); d > 2e-6*math.Max(1, math.Abs(float64(want[i]))) {
				t.Errorf("gelu n=%d gelu(%g + %g) = %g, want %g", n, x[i], b[i], got[i], want[i])
				break
			}
		}
	}
	// The tail is written within the slice only.
	buf := []float32{1, 2, 3, 7}
	expShifted(buf[:3], 1)
	biasGELU(buf[:3], []float32{1, 1, 1})
	add(buf[:3], []float32{1, 1, 1, 1})
	if buf[3] != 7 {
		t.Errorf("element %d past the slice was written: %g", 3, buf[3])
	}
}

// TestResidualNorm checks the fused bias, residual and layer norm against
// its definition, two rows at a time, on the hidden widths of the models
// and a width the SIMD path leaves to Go.
func TestResidualNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, h := range []int{16, 384, 392, 10} {
		vec := func(scale, shift float64) []float32 {
			v := make([]float32, 2*h)
			for i := range v {
				v[i] = float32(rng.NormFloat64()*scale + shift)
			}
			return v
		}
		x, y, b := vec(2, 0.5), vec(1, 0), vec(0.1, 0)[:h]
		n := layerNorm{gamma: vec(0.3, 1)[:h], beta: vec(0.1, 0)[:h]}
		got := append([]float32(nil), x...)
		n.residual(got, y, b, 1e-12)
		for r := range 2 {
			var mean, variance float64
			v := make([]float64, h)
			for j := range h {
				v[j] = float64(x[r*h+j]) + float64(y[r*h+j]) + float64(b[j])
				mean += v[j] / float64(h)
			}
			for j := range h {
				variance += (v[j] - mean) * (v[j] - mean) / float64(h)
			}
			for j := range h {
				want := (v[j]-mean)/math.Sqrt(variance+1e-12)*float64(n.gamma[j]) + float64(n.beta[j])
				if d := math.Abs(float64(got[r*h+j]) - want); d > 2e-5*math.Max(1, math.Abs(want)) {
					t.Fatalf("h=%d row %d [%d]: %g, want %g", h, r, j, got[r*h+j], want)
				}
			}
		}
	}
}

// TestScaleRows: each row's first width values are the source's times the
// row's multiplier, exactly, from another buffer or in place, and nothing
// past a row's width is written, for widths of whole blocks of 16 and not.
func TestScaleRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, width := range []int{1, 15, 16, 17, 32, 33, 64} {
		const rows, ld = 3, 70
		src := make([]float32, rows*ld)
		for i := range src {
			src[i] = float32(rng.NormFloat64())
		}
		mul := []float32{0.5, -3, 1.0 / 7}
		dst := make([]float32, rows*ld)
		for i := range dst {
			dst[i] = 42
		}
		inPlace := append([]float32(nil), src...)
		scaleRows(dst, ld, src, ld, mul, width)
		scaleRows(inPlace, ld, inPlace, ld, mul, width)
		for r := range rows {
			for j := range ld {
				want, wantIn := float32(42), src[r*ld+j]
				if j < width {
					want = src[r*ld+j] * mul[r]
					wantIn = want
				}
				if dst[r*ld+j] != want || inPlace[r*ld+j] != wantIn {
					t.Fatalf("width %d row %d [%d]: %g and in place %g, want %g and %g", width, r, j, dst[r*ld+j], inPlace[r*ld+j], want, wantIn)
				}
			}
		}
	}
}
