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

// quantRowAVX512 is quantRowAVX2 16 at a time, n a positive multiple of
// 16 (gemm_int8_amd64.s).
//
//go:noescape
func quantRowAVX512(dst *byte, x *float32, n int, inv, zf float32)

// minMaxAVX512 is minMaxAVX2 for n a positive multiple of 32
// (gemm_int8_amd64.s).
//
//go:noescape
func minMaxAVX512(x *float32, n int) (lo, hi float32)

// absMaxRowsAVX512 sets peak[i] = max(peak[i], |x[r·ld+i]|) over r < rows
// (positive) for i < n, n a positive multiple of 16 (gemm_int8_amd64.s).
//
//go:noescape
func absMaxRowsAVX512(peak, x *float32, n, ld, rows int)

// dequantPanelsAVX512 writes one input channel's int8 weights of panels
// packed panels, scaled back to float32, 16 floats every ldd bytes of dst
// (gemm_int8_amd64.s); codes and scales point at the first panel's quad
// of the channel and its scales, shift is the channel's byte in the quad
// times 8, pl the bytes of a panel.
//
//go:noescape
func dequantPanelsAVX512(dst *float32, ldd int, codes, scales *byte, pl, shift, panels int)

// outlierRowsAVX512 adds an int8 product's outlier channels' share to y
// (gemm_int8_amd64.s): rows rows of a (c values each) times the c rows of
// w's packed panels over n columns.
//
//go:noescape
func outlierRowsAVX512(y *float32, ldy int, a *float32, c int, w *float32, n, rows int)

// outlierProductSIMD adds to rows rows of y (ldy apart, n columns) the
// product of a [rows, c] and w [c, n] (packed as packNT packs it): the
// float32 kernels' sums from zero, added to y, as gemm.mul into scratch
// then add compute them on the sets that sum with FMA (fusedOutliers).
// It reports whether it did.
func outlierProductSIMD(y []float32, ldy int, a []float32, c int, w []float32, n, rows int) bool {
	if !hasAVX512 || rows == 0 || c == 0 || n == 0 {
		return false
	}
	_, _, _ = y[(rows-1)*ldy+n-1], a[rows*c-1], w[packedLen(c, n)-1]
	outlierRowsAVX512(&y[0], ldy, &a[0], c, &w[0], n, rows)
	return true
}

// quantizeSIMD quantises the longest prefix of x it handles into dst and
// returns its length.
func quantizeSIMD(dst []byte, x []float32, inv, zf float32) int {
	if n := len(x) &^ 15; hasAVX512 && n > 0 {
		_ = dst[n-1]
		quantRowAVX512(&dst[0], &x[0], n, inv, zf)
		return n
	}
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
	if n := len(x) &^ 31; hasAVX512 && n > 0 {
		lo, hi := minMaxAVX512(&x[0], n)
		return lo, hi, n
	}
	n := len(x) &^ 7
	if !hasAVX2FMA || n == 0 {
		return 0, 0, 0
	}
	lo, hi := minMaxAVX2(&x[0], n)
	return lo, hi, n
}

// dequantColumnsSIMD writes into dst, as packInt8Columns does, channel
// ch's weights of the first panels panels of bp (packed for k), and
// reports whether it did.
func dequantColumnsSIMD(dst []float32, ldd int, bp []byte, k, ch, panels int) bool {
	if !hasAVX512 || panels == 0 {
		return false
	}
	kq, pl := int8Quads(k), int8PanelLen(k)
	_, _ = dst[(panels-1)*ldd+panelWidth-1], bp[panels*pl-1]
	dequantPanelsAVX512(&dst[0], 4*ldd, &bp[(ch/4)*64], &bp[64*kq+4*panelWidth], pl, 8*(ch%4), panels)
	return true
}

// absMaxAVX2 sets peak[i] = max(peak[i], |x[i]|) for i < n, n a positive
// multiple of 8 (gemm_int8_amd64.s).
//
//go:noescape
func absMaxAVX2(peak, x *float32, n int)

// absMaxSIMD computes absMax over the longest prefix of its m rows of x
// (k wide) it handles, and returns that prefix's length.
func absMaxSIMD(peak, x []float32, m, k int) int {
	if n := k &^ 15; hasAVX512 && n > 0 && m > 0 {
		_, _ = peak[n-1], x[(m-1)*k+n-1]
		absMaxRowsAVX512(&peak[0], &x[0], n, k, m)
		return n
	}
	n := k &^ 7
	if !hasAVX2FMA || n == 0 {
		return 0
	}
	_ = peak[n-1]
	for r := range m {
		absMaxAVX2(&peak[0], &x[r*k], n)
	}
	return n
}
