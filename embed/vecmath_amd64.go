package embed

import (
	"math"

	"golang.org/x/sys/cpu"
)

// hasAVX512 reports whether this CPU runs the AVX-512 element-wise kernels
// (vecmath_amd64.s). It is set once, from the CPU's features, before main
// runs.
var hasAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL

//go:noescape
func expShiftedAVX512(row *float32, n int, scale float32, dst *uint16) float32

//go:noescape
func scaleRowsAVX512(dst *float32, ldd int, src *float32, lds int, mul *float32, rows, width int)

//go:noescape
func addAVX512(dst *float32, src *float32, n int, gelu bool)

//go:noescape
func residualNormAVX512(x, y, b, gamma, beta *float32, h int, eps, invH float32)

// expShiftedSIMD computes expShifted with AVX-512, else AVX2 for a row
// of at least 8, and reports whether it did.
func expShiftedSIMD(row []float32, scale float32) (float32, bool) {
	switch {
	case hasAVX512 && len(row) > 0:
		return expShiftedAVX512(&row[0], len(row), scale, nil), true
	case hasAVX2FMA && len(row) >= 8:
		return expShiftedAVX2(row, scale), true
	}
	return 0, false
}

// expShiftedBF16SIMD computes expShiftedBF16 with AVX-512 and reports
// whether it did.
func expShiftedBF16SIMD(dst []uint16, row []float32, scale float32) (float32, bool) {
	if !hasAVX512 || len(row) == 0 {
		return 0, false
	}
	_ = dst[len(row)-1]
	return expShiftedAVX512(&row[0], len(row), scale, &dst[0]), true
}

// scaleRowsSIMD computes scaleRows with AVX-512 and reports whether it
// did; its caller has checked the bounds.
func scaleRowsSIMD(dst []float32, ldd int, src []float32, lds int, mul []float32, width int) bool {
	if !hasAVX512 {
		return false
	}
	scaleRowsAVX512(&dst[0], ldd, &src[0], lds, &mul[0], len(mul), width)
	return true
}

// biasGELUSIMD computes one row of biasGELU with SIMD and reports whether
// it did.
func biasGELUSIMD(x, b []float32) bool { return addThenSIMD(x, b, true) }

// addSIMD computes add with SIMD and reports whether it did.
func addSIMD(dst, src []float32) bool { return addThenSIMD(dst, src, false) }

// addThenSIMD adds src (at least as long as dst) to dst with AVX-512, else
// AVX2 for at least 8, then applies GELU if gelu, and reports whether it
// did.
func addThenSIMD(dst, src []float32, gelu bool) bool {
	switch {
	case hasAVX512 && len(dst) > 0:
		_ = src[len(dst)-1]
		addAVX512(&dst[0], &src[0], len(dst), gelu)
	case hasAVX2FMA && len(dst) >= 8:
		_ = src[len(dst)-1]
		addThenAVX2(dst, src, gelu)
	default:
		return false
	}
	return true
}

// residualNormSIMD computes one row of layerNorm.residual with AVX-512
// for rows a multiple of 16 wide, else AVX2 for a multiple of 8, and
// reports whether it did.
func residualNormSIMD(x, y, b, gamma, beta []float32, eps float32) bool {
	h := len(x)
	if h == 0 {
		return false
	}
	_, _, _, _ = y[h-1], b[h-1], gamma[h-1], beta[h-1]
	switch {
	case hasAVX512 && h%16 == 0:
		residualNormAVX512(&x[0], &y[0], &b[0], &gamma[0], &beta[0], h, eps, 1/float32(h))
	case hasAVX2FMA && h%8 == 0:
		residualNormAVX2(&x[0], &y[0], &b[0], &gamma[0], &beta[0], h, eps, 1/float32(h))
	default:
		return false
	}
	return true
}

// absMaxAVX512 returns the largest |x[i]| for i < n, n a positive multiple
// of 16, or NaN if any x[i] is not finite (vecmath_amd64.s).
//
//go:noescape
func absMaxAVX512(x *float32, n int) float32

// quantizeAVX512 sets dst[i] to math.Round(x[i]·inv), the product rounded
// to float32 first, for i < n, n a positive multiple of 16, every product
// within ±127.5 (vecmath_amd64.s).
//
//go:noescape
func quantizeAVX512(dst *int8, x *float32, n int, inv float32)

// quantizeSymSIMD does Quantize's work with AVX-512 over the longest prefix
// of v a multiple of 16 long, the rest in Go, and reports whether it did:
// not without AVX-512, nor for a v that is not finite or so small that
// 127 over its largest magnitude is infinite (Quantize's plain loop then
// defines the codes). dst is as long as v.
func quantizeSymSIMD(dst []int8, v []float32) (scale float32, ok bool) {
	n := len(v) &^ 15
	if !hasAVX512 || n == 0 {
		return 0, false
	}
	maxAbs := absMaxAVX512(&v[0], n)
	for _, x := range v[n:] {
		maxAbs = max(maxAbs, float32(math.Abs(float64(x))))
	}
	if math.IsNaN(float64(maxAbs)) || math.IsInf(float64(maxAbs), 0) {
		return 0, false
	}
	if maxAbs == 0 {
		clear(dst)
		return 0, true
	}
	inv := 127 / maxAbs
	if math.IsInf(float64(inv), 0) { // maxAbs under about 3.7e-37: every product infinite or NaN
		return 0, false
	}
	quantizeAVX512(&dst[0], &v[0], n, inv)
	for i := n; i < len(v); i++ {
		dst[i] = code(v[i], inv)
	}
	return maxAbs / 127, true
}

//go:noescape
func attendSmallAVX512(q *float32, ld int, kp *float32, v *float32, seq int, scale float32, nr int, p *float32, ctx *float32, ldc int)

// attendSmallSIMD computes attend's float32 path in one pass with AVX-512
// for heads of 32 and sequences of at most attendSmallTokens (a
// question's), from keys packed by packNT into kp, and reports whether it
// did; p is grown to the kernel's scratch.
func attendSmallSIMD(q, kp, v []float32, dh, ld, rows, seq int, scale float32, p *[]float32, ctx []float32, ldc int) bool {
	if !hasAVX512 || dh != 32 || seq > attendSmallTokens || rows == 0 || seq == 0 {
		return false
	}
	_, _, _ = q[(rows-1)*ld+dh-1], v[(seq-1)*ld+dh-1], ctx[(rows-1)*ldc+dh-1]
	_ = kp[packedLen(dh, seq)-1]
	*p = resize(*p, 4*64+4)
	for t := 0; t < rows; t += 4 {
		attendSmallAVX512(&q[t*ld], ld, &kp[0], &v[0], seq, scale, min(4, rows-t), &(*p)[0], &ctx[t*ldc], ldc)
	}
	return true
}
