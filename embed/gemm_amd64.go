package embed

import "golang.org/x/sys/cpu"

// sgemm6x16AVX2 is the AVX2+FMA micro-kernel (gemm_amd64.s).
//
//go:noescape
func sgemm6x16AVX2(k int, a *float32, lda int, b *float32, c *float32, ldc int)

// dotAVX2 is the AVX2+FMA inner product of n floats, n a positive multiple
// of 8 (gemm_amd64.s).
//
//go:noescape
func dotAVX2(a *float32, b *float32, n int) float32

// hasAVX2FMA reports whether this CPU runs the AVX2+FMA kernels. It is set
// once, from the CPU's features, before main runs.
var hasAVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dotSIMD returns the inner product of the longest prefix of a and b it
// handles, and that prefix's length.
func dotSIMD(a, b []float32) (float32, int) {
	n := len(a) &^ 7
	if !hasAVX2FMA || n == 0 {
		return 0, 0
	}
	return dotAVX2(&a[0], &b[0], n), n
}

// dotInt8AVX2 is Σ a[i]·b[i] over n int8 elements, n a positive multiple
// of 32 (gemm_amd64.s).
//
//go:noescape
func dotInt8AVX2(a *int8, b *int8, n int) int32

// dotInt8SIMD returns Σ a[i]·b[i] over the longest prefix it handles, and
// that prefix's length.
func dotInt8SIMD(a, b []int8) (int32, int) {
	n := len(a) &^ 31
	if !hasAVX2FMA || n == 0 {
		return 0, 0
	}
	return dotInt8AVX2(&a[0], &b[0], n), n
}

// kernelAVX2 adapts the assembly kernel to the kernel signature.
func kernelAVX2(k int, a []float32, lda int, b []float32, c []float32, ldc int) {
	sgemm6x16AVX2(k, &a[0], lda, &b[0], &c[0], ldc)
}

// sgemm12x32AVX512 is the AVX-512 micro-kernel over two panels
// (gemm_avx512_amd64.s).
//
//go:noescape
func sgemm12x32AVX512(k int, a *float32, lda int, b *float32, c *float32, ldc int)

func kernelAVX512(k int, a []float32, lda int, b []float32, c []float32, ldc int) {
	sgemm12x32AVX512(k, &a[0], lda, &b[0], &c[0], ldc)
}

// bestKernel picks the fastest micro-kernels this CPU runs: AVX-512's
// 12×32 tiles where they fit (two FMA units of 16 lanes on Intel; Zen 4
// runs them as two halves) with AVX2+FMA's 6×16 for the rest, else AVX2+FMA.
func bestKernel() (kernel, wideKernel[float32], string) {
	switch {
	case hasAVX512 && hasAVX2FMA:
		return kernelAVX2, wideKernel[float32]{kern: kernelAVX512, rows: 12, cols: 2 * panelWidth}, "avx512+fma"
	case hasAVX2FMA:
		return kernelAVX2, wideKernel[float32]{}, "avx2+fma"
	}
	return kernelGo, wideKernel[float32]{}, "go"
}
