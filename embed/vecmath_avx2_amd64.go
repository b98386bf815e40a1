package embed

import "golang.org/x/sys/cpu"

// The AVX2+FMA element-wise kernels (vecmath_avx2_amd64.s), for CPUs
// without AVX-512: each handles a positive multiple of 8 floats.

//go:noescape
func maxAVX2(row *float32, n int) float32

//go:noescape
func expSumAVX2(row *float32, n int, max, scale float32) float32

//go:noescape
func addGELUAVX2(dst, src *float32, n int, gelu bool)

//go:noescape
func residualNormAVX2(x, y, b, gamma, beta *float32, h int, eps, invH float32)

// expShiftedAVX2 computes expShifted over a row of at least 8 floats,
// the last len mod 8 in Go.
func expShiftedAVX2(row []float32, scale float32) float32 {
	n8 := len(row) &^ 7
	maxv := maxAVX2(&row[0], n8)
	for _, v := range row[n8:] {
		maxv = max(maxv, v)
	}
	sum := expSumAVX2(&row[0], n8, maxv, scale)
	for i, v := range row[n8:] {
		e := expf((v - maxv) * scale)
		row[n8+i] = e
		sum += e
	}
	return sum
}

// addThenAVX2 is addThenSIMD's AVX2 path, dst at least 8 long.
func addThenAVX2(dst, src []float32, gelu bool) {
	n8 := len(dst) &^ 7
	addGELUAVX2(&dst[0], &src[0], n8, gelu)
	for i := n8; i < len(dst); i++ {
		dst[i] += src[i]
	}
	if gelu {
		geluGo(dst[n8:])
	}
}

// hasF16C reports whether this CPU widens IEEE halves with VCVTPH2PS. It
// is set once, from the CPU's features, before main runs.
var hasF16C = cpu.X86.HasF16C && cpu.X86.HasAVX

//go:noescape
func halfToFloatF16C(dst *float32, src *uint16, n int)

// halvesSIMD widens the longest prefix of src it handles into dst and
// returns that prefix's length.
func halvesSIMD(dst []float32, src []uint16) int {
	n := len(src) &^ 15
	if !hasF16C || n == 0 {
		return 0
	}
	_ = dst[n-1]
	halfToFloatF16C(&dst[0], &src[0], n)
	return n
}
