package embed

import (
	"math/rand/v2"
	"testing"
)

// TestDotInt8Kernels: each int8 inner-product kernel this CPU runs gives
// the plain sum exactly, for every length it takes (the VNNI kernel's
// 64-byte step alone and after 128-byte ones), codes anywhere in int8 (its
// shifted operand's -128 included) and the largest magnitudes.
func TestDotInt8Kernels(t *testing.T) {
	type kernel struct {
		name string
		ok   bool
		dot  func(a, b *int8, n int) int32
	}
	kernels := []kernel{{"avx2", hasAVX2FMA, dotInt8AVX2Row}, {"avx512-vnni", hasVNNI, dotInt8VNNI}}
	r := rand.New(rand.NewPCG(15, 16))
	for _, k := range kernels {
		if !k.ok {
			t.Logf("%s: not on this CPU", k.name)
			continue
		}
		for _, n := range []int{64, 128, 192, 384, 768, 1152} {
			for trial := range 30 {
				a, b := make([]int8, n), make([]int8, n)
				for i := range n {
					switch trial % 3 {
					case 0:
						a[i], b[i] = []int8{-128, -127, 0, 127}[r.IntN(4)], []int8{-127, 0, 127}[r.IntN(3)]
					default:
						a[i], b[i] = int8(r.IntN(256)-128), int8(r.IntN(255)-127)
					}
				}
				var want int32
				for i := range n {
					want += int32(a[i]) * int32(b[i])
				}
				if got := k.dot(&a[0], &b[0], n); got != want {
					t.Fatalf("%s n=%d trial %d: %d, want %d", k.name, n, trial, got, want)
				}
			}
		}
	}
}

// BenchmarkDotInt8Kernels times each kernel over one 768-code row, the
// core of a stored vector of the default models that a similar-paper
// query's first pass compares.
func BenchmarkDotInt8Kernels(b *testing.B) {
	x, y := make([]int8, 768), make([]int8, 768)
	for i := range x {
		x[i], y[i] = int8(i%255-127), int8((i*7)%255-127)
	}
	for _, k := range []struct {
		name string
		ok   bool
		dot  func(a, b *int8, n int) int32
	}{{"avx2", hasAVX2FMA, dotInt8AVX2Row}, {"avx512-vnni", hasVNNI, dotInt8VNNI}} {
		if !k.ok {
			continue
		}
		b.Run(k.name, func(b *testing.B) {
			var s int32
			for b.Loop() {
				s += k.dot(&x[0], &y[0], len(x))
			}
			_ = s
		})
	}
}

// dotInt8AVX2Row is one row's product by the AVX2 kernel.
func dotInt8AVX2Row(a, b *int8, n int) int32 {
	var d int32
	dotsInt8AVX2(a, b, 0, n, 1, &d)
	return d
}

// dotInt8VNNI is one row's product by the VNNI kernel.
func dotInt8VNNI(a, b *int8, n int) int32 {
	var d int32
	dotsInt8VNNI(a, b, 0, n, 1, &d)
	return d
}
