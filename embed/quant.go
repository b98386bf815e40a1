package embed

import "math"

// Quantize writes v as int8 codes into dst (len(v)) and returns the scale:
// v[i] ≈ scale · dst[i]. Each vector gets its own scale, its largest
// magnitude over 127, so no code saturates.
func Quantize(dst []int8, v []float32) float32 {
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
		dst[i] = int8(math.Round(float64(x * inv)))
	}
	return maxAbs / 127
}

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

// DotsInt8Four sets out[j][r] to DotInt8(q[j], rows[r·stride:]) for
// four queries j and every r: DotsInt8 for four queries of one length
// over the same len(out[0]) rows at once, as a first pass compares a block
// of rows already in the core's cache with several queries. With AVX-512
// VNNI four rows meet the four queries a step, so that each row's codes
// are read once for all four; the sums are DotsInt8's either way.
func DotsInt8Four(q *[4][]int8, rows []int8, stride int, out *[4][]int32) {
	n, count := len(q[0]), len(out[0])
	for j := range q {
		if len(q[j]) != n || len(out[j]) != count {
			panic("embed: DotsInt8Four: queries or outputs of different lengths")
		}
	}
	if count == 0 {
		return
	}
	if len(rows) < (count-1)*stride+n {
		panic("embed: DotsInt8Four: rows shorter than len(out[0]) rows of stride")
	}
	if dotsInt8FourSIMD(q, rows, stride, out) {
		return
	}
	for j := range q {
		DotsInt8(q[j], rows, stride, out[j], true)
	}
}

// ScaledAbove writes to idx, in order, each i at which
// float32(dots[i])·scales[i]·scale, rounded as Go rounds it (the first
// product, then the second), is at least floor, and returns how many:
// the rows of a first pass over int8 codes that may beat its selection's
// floor, 16 at a time with AVX-512. idx must hold len(dots)+16.
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
