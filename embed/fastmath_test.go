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

// TestElementwiseSIMD checks softmaxScaled and gelu, AVX-512 where the CPU
// has it, against their Go definitions on lengths that exercise the full
// blocks and the masked tail, and on values past exp's range.
func TestElementwiseSIMD(t *testing.T) {
	t.Logf("SIMD element-wise kernels: %v", softmaxSIMD([]float32{0}, 1))
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 15, 16, 17, 33, 221, 512} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 4)
		}
		x[rng.IntN(n)] = -300 // e^(-300·scale) underflows
		want := append([]float32(nil), x...)
		got := append([]float32(nil), x...)
		softmaxGo(want, 0.18)
		softmaxScaled(got, 0.18)
		var sum float64
		for i := range got {
			sum += float64(got[i])
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-6*float64(want[i])+1e-9 {
				t.Errorf("softmax n=%d [%d]: %g, want %g", n, i, got[i], want[i])
				break
			}
		}
		if math.Abs(sum-1) > 1e-5 {
			t.Errorf("softmax n=%d sums to %g", n, sum)
		}

		for i := range x {
			x[i] = float32(rng.NormFloat64() * 3)
		}
		x[0], x[n-1] = -40, 40
		want = append(want[:0], x...)
		got = append(got[:0], x...)
		geluGo(want)
		gelu(got)
		for i := range got {
			if d := math.Abs(float64(got[i] - want[i])); d > 2e-6*math.Max(1, math.Abs(float64(want[i]))) {
				t.Errorf("gelu n=%d gelu(%g) = %g, want %g", n, x[i], got[i], want[i])
				break
			}
		}
	}
	// The tail is written within the slice only.
	buf := []float32{1, 2, 3, 7}
	softmaxScaled(buf[:3], 1)
	gelu(buf[:3])
	if buf[3] != 7 {
		t.Errorf("element %d past the slice was written: %g", 3, buf[3])
	}
}
