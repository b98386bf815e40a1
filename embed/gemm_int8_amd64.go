package embed

import "golang.org/x/sys/cpu"

// gemmU8S8AVX2 is the 6×16 int8 micro-kernel (gemm_int8_amd64.s).
//
//go:noescape
func gemmU8S8AVX2(kq int, a *byte, lda int, b *byte, c *float32, ldc int)

// quantRowAVX2 quantises x[0:n] into dst[0:n], n a positive multiple of 8
// (gemm_int8_amd64.s).
//
//go:noescape
func quantRowAVX2(dst *byte, x *float32, n int, inv, zf float32)

// minMaxAVX2 returns the least and greatest of x[0:n], n a positive
// multiple of 8 (gemm_int8_amd64.s).
//
//go:noescape
func minMaxAVX2(x *float32, n int) (lo, hi float32)

func kernelInt8AVX2(kq int, a []byte, lda int, b []byte, c []float32, ldc int) {
	gemmU8S8AVX2(kq, &a[0], lda, &b[0], &c[0], ldc)
}

// gemmU8S8VNNI is the 6×64 AVX-512 VNNI int8 micro-kernel over four
// panels (gemm_vnni_amd64.s).
//
//go:noescape
func gemmU8S8VNNI(kq int, a *byte, lda int, b *byte, c *float32, ldc int)

func kernelInt8VNNI(kq int, a []byte, lda int, b []byte, c []float32, ldc int) {
	gemmU8S8VNNI(kq, &a[0], lda, &b[0], &c[0], ldc)
}

// hasVNNI reports whether this CPU runs the AVX-512 VNNI int8 kernel. It
// is set once, from the CPU's features, before main runs.
var hasVNNI = hasAVX512 && cpu.X86.HasAVX512VNNI && hasAVX2FMA

// quantizeSIMD quantises the longest prefix of x it handles into dst and
// returns its length.
func quantizeSIMD(dst []byte, x []float32, inv, zf float32) int {
	n := len(x) &^ 7
	if !hasAVX2FMA || n == 0 {
		return 0
	}
	_ = dst[n-1]
	quantRowAVX2(&dst[0], &x[0], n, inv, zf)
	return n
}

// minMaxSIMD returns the least and greatest of the longest prefix of x it
// handles, and that prefix's length.
func minMaxSIMD(x []float32) (float32, float32, int) {
	n := len(x) &^ 7
	if !hasAVX2FMA || n == 0 {
		return 0, 0, 0
	}
	lo, hi := minMaxAVX2(&x[0], n)
	return lo, hi, n
}

// absMaxAVX2 sets peak[i] = max(peak[i], |x[i]|) for i < n, n a positive
// multiple of 8 (gemm_int8_amd64.s).
//
//go:noescape
func absMaxAVX2(peak, x *float32, n int)

// absMaxSIMD computes absMax over the longest prefix it handles and
// returns its length.
func absMaxSIMD(peak, x []float32) int {
	n := len(x) &^ 7
	if !hasAVX2FMA || n == 0 {
		return 0
	}
	_ = peak[n-1]
	absMaxAVX2(&peak[0], &x[0], n)
	return n
}
