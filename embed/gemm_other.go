//go:build !amd64

package embed

// simdKernels finds none here: the portable kernels serve.
func simdKernels() []kernels { return nil }

// dotSIMD handles nothing here; Dot computes in Go.
func dotSIMD(a, b []float32) (float32, int) { return 0, 0 }

// dots4SIMD handles nothing here; Dots4 goes row by row.
func dots4SIMD(v []float32, rows *[4][]float32) (int, [4]float32) { return 0, [4]float32{} }

// dotsGridSIMD handles nothing here; DotsGrid goes by Dots4 and Dot.
func dotsGridSIMD(a, b [][]float32, out []float32) bool { return false }

// dequantSIMD handles nothing here; Dequantize computes in Go.
func dequantSIMD(dst []float32, codes []byte, scale float32) int { return 0 }

// dotInt8SIMD handles nothing here; DotInt8 computes in Go.
func dotInt8SIMD(a, b []int8) (int32, int) { return 0, 0 }

// expShiftedSIMD handles nothing here; expShifted computes in Go.
func expShiftedSIMD(row []float32, scale float32) (float32, bool) { return 0, false }

// expShiftedBF16SIMD handles nothing here; expShiftedBF16 computes in Go.
func expShiftedBF16SIMD(dst []uint16, row []float32, scale float32) (float32, bool) { return 0, false }

// scaleRowsSIMD handles nothing here; scaleRows computes in Go.
func scaleRowsSIMD(dst []float32, ldd int, src []float32, lds int, mul []float32, width int) bool {
	return false
}

// packKeysSIMD packs nothing here; packBF16Keys packs in Go.
func packKeysSIMD(dst []uint16, kp, groups int, keys []uint16, ld int) bool { return false }

// packFloatKeysSIMD handles nothing here; attend packs keys with packNT.
func packFloatKeysSIMD(dst []float32, seq, dh int, keys []float32, ld int) bool { return false }

// packValuesSIMD packs nothing here; packBF16Values packs in Go.
func packValuesSIMD(dst []uint16, pl, pairs, n int, values []uint16, ld int) bool { return false }

// biasGELUSIMD handles nothing here; biasGELU computes in Go.
func biasGELUSIMD(x, b []float32) bool { return false }

// addSIMD handles nothing here; add computes in Go.
func addSIMD(dst, src []float32) bool { return false }

// residualNormSIMD handles nothing here; layerNorm.residual computes in Go.
func residualNormSIMD(x, y, b, gamma, beta []float32, eps float32) bool { return false }

// rowToBF16SIMD handles nothing here; roundBF16 converts in Go.
func rowToBF16SIMD(dst []uint16, x []float32) bool { return false }

// halvesSIMD handles nothing here; halvesToFloats widens in Go.
func halvesSIMD(dst []float32, src []uint16) int { return 0 }

// quantizeSIMD handles nothing here; quantizeRow computes in Go.
func quantizeSIMD(dst []byte, x []float32, inv, zf float32) int { return 0 }

// minMaxSIMD handles nothing here; minMax computes in Go.
func minMaxSIMD(x []float32) (float32, float32, int) { return 0, 0, 0 }

// absMaxSIMD handles nothing here; absMax computes in Go.
func absMaxSIMD(peak, x []float32, m, k int) int { return 0 }

// dequantColumnsSIMD handles nothing here; packInt8Columns computes in Go.
func dequantColumnsSIMD(dst []float32, ldd int, bp []byte, k, ch, panels int) bool { return false }

// mulAMX computes nothing here: there is no AMX.
func (g *gemmInt8) mulAMX(m, n, k int, a []byte, lda int, bp []byte, c []float32, ldc int) (rows, cols int) {
	return 0, 0
}

// mulAMX computes nothing here: there is no AMX.
func (g *gemmBF16) mulAMX(m, n, kp int, a []uint16, lda int, bp []uint16, c []float32, ldc int) (rows, cols int) {
	return 0, 0
}

// dotsInt8SIMD handles nothing here; DotsInt8 goes row by row.
func dotsInt8SIMD(q, rows []int8, stride int, out []int32, cached bool) bool { return false }

// dotsInt8FourSIMD handles nothing here; DotsInt8Many takes each query
// in turn.
func dotsInt8FourSIMD(q *[4][]int8, distinct int, rows []int8, stride int, out *[4][]int32) bool {
	return false
}

// outlierProductSIMD handles nothing here; addOutliers multiplies and adds.
func outlierProductSIMD(y []float32, ldy int, a []float32, c int, w []float32, n, rows int) bool {
	return false
}

// scaledAboveSIMD handles nothing here; ScaledAbove computes in Go.
func scaledAboveSIMD(dots []int32, scales []float32, scale, floor float32, idx []int32) (count, done int) {
	return 0, 0
}

// quantizeSymSIMD handles nothing here; Quantize computes in Go.
func quantizeSymSIMD(dst []int8, v []float32) (scale float32, ok bool) { return 0, false }

// attendSmallSIMD handles nothing here; attend multiplies by the kernels.
func attendSmallSIMD(q, kp, v []float32, dh, ld, rows, seq int, scale float32, p *[]float32, ctx []float32, ldc int) bool {
	return false
}
