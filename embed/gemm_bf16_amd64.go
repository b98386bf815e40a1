package embed

import "golang.org/x/sys/cpu"

//go:generate go run ./internal/bf16gen

// hasBF16 reports whether this CPU runs the AVX-512 BF16 kernel
// (gemm_bf16_amd64.s). It is set once, from the CPU's features, before
// main runs.
var hasBF16 = hasAVX512 && cpu.X86.HasAVX512BF16 && cpu.X86.HasAVX512BW

// gemmBF16AVX512 is the 12×32 bf16 micro-kernel (gemm_bf16_amd64.s).
//
//go:noescape
func gemmBF16AVX512(kp int, a *uint16, lda int, b *uint16, c *float32, ldc int)

// toBF16AVX512 rounds x[0:n] to bfloat16 into dst[0:n]
// (vecmath_amd64.s).
//
//go:noescape
func toBF16AVX512(dst *uint16, x *float32, n int)

func kernelBF16AVX512(kp int, a []uint16, lda int, b []uint16, c []float32, ldc int) {
	gemmBF16AVX512(kp, &a[0], lda, &b[0], &c[0], ldc)
}

// rowToBF16SIMD rounds x into dst[:len(x)] with AVX-512 and reports
// whether it did.
func rowToBF16SIMD(dst []uint16, x []float32) bool {
	if !hasAVX512 || len(x) == 0 {
		return false
	}
	_ = dst[len(x)-1]
	toBF16AVX512(&dst[0], &x[0], len(x))
	return true
}
