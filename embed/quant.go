package embed

import (
	"fmt"
	"math"
)

// Quantize writes v as int8 codes into dst (len(v)) and returns the scale:
// v[i] ≈ scale · dst[i]. Each vector gets its own scale, its largest
// magnitude over 127, so no code saturates.
func Quantize(dst []int8, v []float32) float32 {
	if len(dst) < len(v) {
		panic(fmt.Sprintf("embed: Quantize: %d codes for %d values", len(dst), len(v)))
	}
	dst = dst[:len(v)]
	if scale, ok := quantizeSymSIMD(dst, v); ok {
		return scale
	}
	return quantizeGo(dst, v)
}

// quantizeGo is Quantize in Go alone: the definition the SIMD kernels
// match code for code.
func quantizeGo(dst []int8, v []float32) float32 {
	var maxAbs float32
	for _, x := range v {
		maxAbs = max(maxAbs, float32(math.Abs(float64(x))))
	}
	if maxAbs == 0 {
		clear(dst)
		return 0
	}
	inv := 127 / maxAbs
	for i, x := range v {
		dst[i] = code(x, inv)
	}
	return maxAbs / 127
}

// code is a value's int8 code for the multiplier inv (127 over the
// vector's largest magnitude): the product rounded to float32, then to
// the nearest integer, halves away from zero.
func code(x, inv float32) int8 { return int8(math.Round(float64(x * inv))) }

// DotInt8 returns the inner product of two int8 code vectors, codes in
// [-127, 127] as Quantize makes them (b at least
// as long as a). Multiplied by both scales it approximates the inner
// product of the vectors they encode. Vectors must be shorter than 133,000
// so the sum fits an int32.
func DotInt8(a, b []int8) int32 {
	b = b[:len(a)]
	s, i := dotInt8SIMD(a, b)
	var s0, s1 int32
	for ; i+2 <= len(a); i += 2 {
		s0 += int32(a[i]) * int32(b[i])
		s1 += int32(a[i+1]) * int32(b[i+1])
	}
	if i < len(a) {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s + s0 + s1
}

// Dequantize sets dst[i] to scale·float32(int8(codes[i])) for every code:
// int8 codes, as bytes, back to float32 (a stored sentence's vector), the
// same bits with SIMD as without.
func Dequantize(dst []float32, codes []byte, scale float32) {
	dst = dst[:len(codes)]
	for i := dequantSIMD(dst, codes, scale); i < len(codes); i++ {
		dst[i] = scale * float32(int8(codes[i]))
	}
}

// DotsInt8 sets out[r] to DotInt8(q, rows[r·stride:]) for every r: the
// inner products of q with len(out) rows stride codes apart, in one call
// where the CPU allows (the first pass of a store over its codes). cached
// tells it the rows were read a moment ago, so that they are in the
// core's cache (a second query over the same block of rows): with
// AVX-512 VNNI it then takes four rows at a time, which is faster from
// the cache and slower from memory. The sums are the same either way.
func DotsInt8(q, rows []int8, stride int, out []int32, cached bool) {
	if len(out) == 0 {
		return
	}
	if len(rows) < (len(out)-1)*stride+len(q) {
		panic("embed: DotsInt8: rows shorter than len(out) rows of stride")
	}
	if dotsInt8SIMD(q, rows, stride, out, cached) {
		return
	}
	for r := range out {
		out[r] = DotInt8(q, rows[r*stride:])
	}
}

// DotsInt8Many sets outs[j][r] to DotInt8(qs[j], rows[r·stride:]) for
// every query j and row r: DotsInt8 for several queries of one length over
// the same len(outs[0]) rows, as a first pass compares a block of rows
// with every query it serves. With AVX-512 VNNI four rows meet four
// queries a step, so that each row's codes are read once for four
// queries; a last group of two or three is made four by repeating one,
// and a lone query, or a single query left after others (whose rows are
// then in the core's cache), goes alone. With AVX2 alone each row meets
// four queries, or three and a repeat; two or one go each alone. Why, with
// BenchmarkDotsInt8Many's figures: dotsInt8FourSIMD. The sums are
// DotsInt8's either way.
func DotsInt8Many(qs [][]int8, rows []int8, stride int, outs [][]int32) {
	if len(qs) != len(outs) {
		panic("embed: DotsInt8Many: queries and outputs of different counts")
	}
	if len(qs) == 0 {
		return
	}
	n, count := len(qs[0]), len(outs[0])
	for j := range qs {
		if len(qs[j]) != n || len(outs[j]) != count {
			panic("embed: DotsInt8Many: queries or outputs of different lengths")
		}
	}
	if count == 0 {
		return
	}
	if len(rows) < (count-1)*stride+n {
		panic("embed: DotsInt8Many: rows shorter than len(outs[0]) rows of stride")
	}
	for k := 0; k < len(qs); {
		m := min(4, len(qs)-k)
		if m == 1 && k > 0 {
			DotsInt8(qs[k], rows, stride, outs[k], true)
			return
		}
		var q4 [4][]int8
		var o4 [4][]int32
		for j := range q4 {
			q4[j], o4[j] = qs[k+min(j, m-1)], outs[k+min(j, m-1)]
		}
		if !dotsInt8FourSIMD(&q4, m, rows, stride, &o4) {
			for j := k; j < k+m; j++ {
				DotsInt8(qs[j], rows, stride, outs[j], j > 0)
			}
		}
		k += m
	}
}

// ScaledAbove writes to idx, in order, each i at which
// float32(dots[i])·scales[i]·scale, rounded as Go rounds it (the first
// product, then the second), is at least floor, and returns how many:
// the rows of a first pass over int8 codes that may beat its selection's
// floor, 16 at a time with AVX-512, 8 with AVX2. idx must hold
// len(dots)+16.
func ScaledAbove(dots []int32, scales []float32, scale, floor float32, idx []int32) int {
	if len(idx) < len(dots)+16 || len(scales) < len(dots) {
		panic("embed: ScaledAbove: idx or scales too short")
	}
	count, i := scaledAboveSIMD(dots, scales, scale, floor, idx)
	for ; i < len(dots); i++ {
		if float32(dots[i])*scales[i]*scale >= floor {
			idx[count] = int32(i)
			count++
		}
	}
	return count
}
