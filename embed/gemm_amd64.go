package embed

import "golang.org/x/sys/cpu"

// sgemm6x16AVX2 is the AVX2+FMA micro-kernel (gemm_amd64.s).
//
//go:noescape
func sgemm6x16AVX2(k int, a *float32, lda int, b *float32, c *float32, ldc int)

// kernelAVX2 adapts the assembly kernel to the kernel signature.
func kernelAVX2(k int, a []float32, lda int, b []float32, c []float32, ldc int) {
	sgemm6x16AVX2(k, &a[0], lda, &b[0], &c[0], ldc)
}

// bestKernel picks the fastest micro-kernel this CPU runs.
func bestKernel() (kernel, string) {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		return kernelAVX2, "avx2+fma"
	}
	return kernelGo, "go"
}
