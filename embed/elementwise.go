package embed

import "math"

// The encoder's element-wise steps (LayerNorm, softmax, GELU, adds), in Go
// as the reference and with SIMD where the CPU has it.

// layerNorm is a layer normalisation's scale (gamma) and shift (beta).
type layerNorm struct{ gamma, beta []float32 }

// residual sets each row of x (width len(b)) to the normalised x + y + b:
// a dense layer's bias, the residual connection and the layer norm in one
// pass.
func (n layerNorm) residual(x, y, b []float32, eps float32) {
	h := len(b)
	for off := 0; off+h <= len(x); off += h {
		row, yr := x[off:off+h], y[off:off+h]
		if residualNormSIMD(row, yr, b, n.gamma, n.beta, eps) {
			continue
		}
		for j := range row {
			row[j] += yr[j] + b[j]
		}
		n.apply(row, h, eps)
	}
}

// apply normalises each row of x (width h) in place.
func (n layerNorm) apply(x []float32, h int, eps float32) {
	for off := 0; off+h <= len(x); off += h {
		row := x[off : off+h]
		var mean float32
		for _, v := range row {
			mean += v
		}
		mean /= float32(h)
		var variance float32
		for _, v := range row {
			d := v - mean
			variance += d * d
		}
		variance /= float32(h)
		inv := float32(1 / math.Sqrt(float64(variance+eps)))
		for j, v := range row {
			row[j] = (v-mean)*inv*n.gamma[j] + n.beta[j]
		}
	}
}

// add adds src to dst element-wise, with SIMD where the CPU has it.
func add(dst, src []float32) {
	if addSIMD(dst, src) {
		return
	}
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += src[i]
	}
}

// expShifted replaces row by e^(scale·(row − max row)) and returns their
// sum: softmax(scale·row) times that sum, with SIMD where the CPU has it.
// (Attention divides its context by the sum rather than every score.)
func expShifted(row []float32, scale float32) float32 {
	if sum, ok := expShiftedSIMD(row, scale); ok {
		return sum
	}
	return expShiftedGo(row, scale)
}

// expShiftedBF16 is expShifted with the exponentials rounded to bfloat16
// into dst[:len(row)], and the sum of the unrounded ones returned; row is
// clobbered. With AVX-512 they are rounded as they are computed.
func expShiftedBF16(dst []uint16, row []float32, scale float32) float32 {
	if sum, ok := expShiftedBF16SIMD(dst, row, scale); ok {
		return sum
	}
	sum := expShifted(row, scale)
	roundBF16(dst[:len(row)], row)
	return sum
}

// scaleRows sets the first width values of each of dst's rows (ldd
// apart) to src's (lds apart) times mul's value for the row, one row for
// each of mul, with SIMD where the CPU has it; dst and src may be the same.
func scaleRows(dst []float32, ldd int, src []float32, lds int, mul []float32, width int) {
	if len(mul) == 0 || width == 0 {
		return
	}
	last := len(mul) - 1
	_, _ = dst[last*ldd+width-1], src[last*lds+width-1]
	if scaleRowsSIMD(dst, ldd, src, lds, mul, width) {
		return
	}
	for r, m := range mul {
		d := dst[r*ldd : r*ldd+width]
		for j, x := range src[r*lds : r*lds+width] {
			d[j] = x * m
		}
	}
}

// expShiftedGo is expShifted in Go, and the reference for the SIMD one.
func expShiftedGo(row []float32, scale float32) float32 {
	maxv := float32(math.Inf(-1))
	for _, v := range row {
		maxv = max(maxv, v)
	}
	var sum float32
	for i, v := range row {
		e := expf((v - maxv) * scale)
		row[i] = e
		sum += e
	}
	return sum
}

// biasGELU adds b to each row of x (width len(b)) and applies the erf
// GELU, in place, with SIMD where the CPU has it.
func biasGELU(x, b []float32) {
	for off := 0; off+len(b) <= len(x); off += len(b) {
		row := x[off : off+len(b)]
		if !biasGELUSIMD(row, b) {
			add(row, b)
			geluGo(row)
		}
	}
}

// geluGo is gelu in Go, and the reference for the SIMD one.
func geluGo(x []float32) {
	for i, v := range x {
		x[i] = 0.5 * v * (1 + erff(v*(1/math.Sqrt2)))
	}
}

// meanRows writes into out the mean of rows from to to (exclusive) of x,
// whose rows are h wide.
func meanRows(out, x []float32, h, from, to int) {
	clear(out)
	for t := from; t < to; t++ {
		add(out, x[t*h:(t+1)*h])
	}
	inv := 1 / float32(to-from)
	for j := range out {
		out[j] *= inv
	}
}
