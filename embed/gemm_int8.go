package embed

import (
	"encoding/binary"
	"math"
)

// Matrix products in 8-bit integers, for CPUs whose fastest multiply-add
// is AVX2's VPMADDUBSW (unsigned bytes times signed bytes, summed in
// pairs): 32 multiply-adds per three instructions against float32 FMA's 8
// per one, and a quarter of the weight bytes.
//
// Weights are quantised once, per output channel, to 7 bits (−63..63) so
// no pair sum of VPMADDUBSW (at most 2·255·63) saturates its int16: every
// integer product is exact. Inputs are quantised per row (per token) to
// unsigned 8 bits with a zero point: x ≈ sx·(q − zx). A product is then
//
//	Σ x·w ≈ sx·sw · (Σ q·wq − zx·Σ wq),
//
// computed in int32 and scaled once. B is packed into panels of
// panelWidth columns holding, for each group of four rows (k quad) p, the
// four bytes (B[4p..4p+3][j]) of each column j; after a panel's k quads
// come its columns' sums of codes (int32) and scales (float32). A rows are
// kept as their codes in k quads, then the row's zero point (int32) and
// scale (float32). The float32 kernels stay the reference.

// int8Kernel computes C[0:6][0:16] = A[0:6] · Bpanel for kq k quads,
// scaled back to float32, overwriting C; A rows are lda bytes apart, C
// rows ldc floats apart.
type int8Kernel func(kq int, a []byte, lda int, b []byte, c []float32, ldc int)

// int8WeightMax is the largest weight code: 7 bits, so no pair sum of
// unsigned 8-bit inputs times weights leaves int16.
const int8WeightMax = 63

// minQuantRange is the least range quantised: 255 over a smaller one may
// overflow float32.
const minQuantRange = 1e-30

// int8Quads is how many k quads cover k.
func int8Quads(k int) int { return (k + 3) / 4 }

// int8RowLen is the bytes of one quantised A row: its codes, zero point
// and scale.
func int8RowLen(k int) int { return 4*int8Quads(k) + 8 }

// int8PanelLen is the bytes of one packed B panel.
func int8PanelLen(k int) int { return 64*int8Quads(k) + 8*panelWidth }

// int8PackedLen is the length of B [k, n] packed into int8 panels.
func int8PackedLen(k, n int) int { return (n + panelWidth - 1) / panelWidth * int8PanelLen(k) }

// packInt8NT quantises Bᵀ for B stored [n, k] (PyTorch's [out, in]
// weights) per row of B, that is per output column, and packs it into
// int8 panels. Columns past n and the last quad's missing rows are zero.
func packInt8NT(dst []byte, n, k int, b []float32) {
	kq := int8Quads(k)
	pl := int8PanelLen(k)
	clear(dst[:int8PackedLen(k, n)])
	for j := 0; j*panelWidth < n; j++ {
		panel := dst[j*pl : (j+1)*pl]
		sums, scales := panel[64*kq:], panel[64*kq+4*panelWidth:]
		for c := 0; c < panelWidth && j*panelWidth+c < n; c++ {
			src := b[(j*panelWidth+c)*k:][:k]
			var maxAbs float32
			for _, v := range src {
				maxAbs = max(maxAbs, float32(math.Abs(float64(v))))
			}
			if maxAbs < minQuantRange {
				continue // codes, sum and scale all zero
			}
			inv := int8WeightMax / maxAbs
			var sum int32
			for p, v := range src {
				q := int8(math.RoundToEven(float64(v * inv)))
				panel[(p/4)*64+4*c+p%4] = byte(q)
				sum += int32(q)
			}
			binary.LittleEndian.PutUint32(sums[4*c:], uint32(sum))
			binary.LittleEndian.PutUint32(scales[4*c:], math.Float32bits(maxAbs/int8WeightMax))
		}
	}
}

// quantizeRows quantises m rows of x (k wide, lda apart) into dst, rows
// int8RowLen(k) apart: each row's codes, the last quad padded with zero
// codes (their weights are zero), then its zero point and scale.
func quantizeRows(dst []byte, x []float32, m, k, lda int) {
	w := int8RowLen(k)
	for r := range m {
		quantizeRow(dst[r*w:(r+1)*w], x[r*lda:r*lda+k])
	}
}

// quantizeRow quantises x into out (int8RowLen(len(x)) bytes). The range
// [lo, hi] always holds 0, so zero has an exact code; x·inv + zx is
// rounded to the nearest even code and clamped to 0..255.
func quantizeRow(out []byte, x []float32) {
	k := len(x)
	lo, hi := minMax(x)
	lo, hi = min(lo, 0), max(hi, 0)
	var inv, scale, zf float32
	if hi-lo >= minQuantRange { // else every code is zero: a row of zeros, or too close to it for 255/(hi−lo)
		inv = 255 / (hi - lo)
		scale = (hi - lo) / 255
		zf = float32(math.RoundToEven(float64(-lo * inv)))
	}
	codes := out[:4*int8Quads(k)]
	done := quantizeSIMD(codes, x, inv, zf)
	for i := done; i < k; i++ {
		codes[i] = quantize(x[i], inv, zf)
	}
	clear(codes[k:])
	binary.LittleEndian.PutUint32(out[len(codes):], uint32(int32(zf)))
	binary.LittleEndian.PutUint32(out[len(codes)+4:], math.Float32bits(scale))
}

// quantize is one input's code, as the SIMD path computes it: the product
// rounded to float32, then the sum, then the nearest even integer.
func quantize(v, inv, zf float32) byte {
	t := float32(v*inv) + zf
	return byte(min(255, max(0, math.RoundToEven(float64(t)))))
}

// minMax returns the least and greatest of x (not empty).
func minMax(x []float32) (float32, float32) {
	lo, hi, i := minMaxSIMD(x)
	if i == 0 {
		lo, hi = x[0], x[0]
	}
	for _, v := range x[i:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

// kernelInt8Go is the portable int8 micro-kernel, the reference the SIMD
// one is tested against; both compute float32(Σ q·wq − zx·Σwq) · (sx·sw)
// with the same roundings, so they agree bit for bit.
func kernelInt8Go(kq int, a []byte, lda int, b []byte, c []float32, ldc int) {
	var acc [tileRows][panelWidth]int32
	for p := 0; p < kq; p++ {
		brow := b[p*64 : p*64+64]
		for r := range tileRows {
			x := a[r*lda+4*p : r*lda+4*p+4]
			row := &acc[r]
			for j := range panelWidth {
				w := brow[4*j : 4*j+4]
				row[j] += int32(x[0])*int32(int8(w[0])) + int32(x[1])*int32(int8(w[1])) +
					int32(x[2])*int32(int8(w[2])) + int32(x[3])*int32(int8(w[3]))
			}
		}
	}
	sums, scales := b[64*kq:], b[64*kq+4*panelWidth:]
	for r := range tileRows {
		params := a[r*lda+4*kq:]
		zx := int32(binary.LittleEndian.Uint32(params))
		sx := math.Float32frombits(binary.LittleEndian.Uint32(params[4:]))
		for j := range panelWidth {
			cs := int32(binary.LittleEndian.Uint32(sums[4*j:]))
			sw := math.Float32frombits(binary.LittleEndian.Uint32(scales[4*j:]))
			c[r*ldc+j] = float32(acc[r][j]-zx*cs) * (sw * sx)
		}
	}
}

// gemmInt8 holds the int8 micro-kernels and the scratch for ragged edges.
type gemmInt8 struct {
	kern int8Kernel
	wide wideKernel[byte]
	amx  bool // whole blocks go to the AMX kernel first (gemm_amx_amd64.go)
	tmpA []byte
	tmpC []float32
	work []int32 // the AMX kernel's sums
}

// mul computes C [m, n] = A · B for B packed by packInt8NT and A [m, k]
// quantised by quantizeRows (rows lda bytes apart), overwriting C (rows
// ldc apart): with AMX the rows and columns of its whole blocks first,
// then the rest with the micro-kernels.
func (g *gemmInt8) mul(m, n, k int, a []byte, lda int, bp []byte, c []float32, ldc int) {
	if emptyProduct(m, n, k, c, ldc) {
		return
	}
	_ = a[(m-1)*lda+int8RowLen(k)-1]
	_ = bp[int8PackedLen(k, n)-1]
	_ = c[(m-1)*ldc+n-1]
	kq := int8Quads(k)
	pl := int8PanelLen(k)
	tiles := func(m, n int, a []byte, bp []byte, c []float32) {
		g.tmpA, g.tmpC = tiledWide(m, n, tileRows, panelWidth, int8RowLen(k), kq, a, lda, pl, bp, c, ldc, g.tmpA, g.tmpC, g.kern, g.wide)
	}
	rows, cols := g.mulAMX(m, n, k, a, lda, bp, c, ldc)
	if rows == 0 {
		tiles(m, n, a, bp, c)
		return
	}
	if cols < n {
		tiles(rows, n-cols, a, bp[cols/panelWidth*pl:], c[cols:])
	}
	if rows < m {
		tiles(m-rows, n, a[rows*lda:], bp, c[rows*ldc:])
	}
}

// Outliers. A few input channels of a transformer's dense layers carry
// values tens of times larger than the rest (the LayerNorm outputs' and
// GELU outputs' "outlier dimensions"); quantised with the others, they set
// every token's step and leave the other channels a few codes. Those
// channels are taken apart per product, as LLM.int8() does: the rest are
// quantised without them, and their share of the product is computed in
// float32 from the quantised weights and added.

// maxOutliers bounds the input channels one product takes apart.
const maxOutliers = 8

// outlierRatio: a channel is an outlier when its largest magnitude over the
// rows exceeds this many times the channels' mean largest magnitude.
const outlierRatio = 6

// outliers appends to dst, in channel order, the outlier channels of x
// (m rows, k wide, contiguous), the maxOutliers largest if there are
// more; peak is k floats of scratch.
func outliers(dst []int, peak []float32, x []float32, m, k int) []int {
	start := len(dst)
	clear(peak)
	absMax(peak, x, m, k)
	var sum float32
	for _, v := range peak {
		sum += v
	}
	limit := outlierRatio * sum / float32(k)
	for j, v := range peak {
		if v <= limit {
			continue
		}
		if len(dst)-start == maxOutliers {
			// Replace the smallest kept if this one is larger.
			least := start
			for i := start; i < len(dst); i++ {
				if peak[dst[i]] < peak[dst[least]] {
					least = i
				}
			}
			if peak[dst[least]] >= v {
				continue
			}
			dst = append(dst[:least], dst[least+1:]...)
		}
		dst = append(dst, j)
	}
	return dst
}

// absMax sets peak[i] to the largest of peak[i] and |x[r·k+i]| over the m
// rows of x (k wide, contiguous).
func absMax(peak, x []float32, m, k int) {
	done := absMaxSIMD(peak, x, m, k)
	for r := range m {
		row := x[r*k : (r+1)*k]
		for i := done; i < k; i++ {
			peak[i] = max(peak[i], float32(math.Abs(float64(row[i]))))
		}
	}
}

// packInt8Columns writes into dst (packedLen(len(chans), n) floats) the
// quantised weights of input channels chans of B [k, n] packed by
// packInt8NT, scaled back to float32 and packed as packNT packs B [c, n]
// with c = len(chans): panel j row i holds channel chans[i]'s weights of
// columns j·16 .. j·16+15. Columns past n are zero.
func packInt8Columns(dst []float32, bp []byte, k, n int, chans []int) {
	kq, pl, c := int8Quads(k), int8PanelLen(k), len(chans)
	whole := n / panelWidth
	if whole > 0 {
		done := true
		for i, ch := range chans {
			done = done && dequantColumnsSIMD(dst[i*panelWidth:], c*panelWidth, bp, k, ch, whole)
		}
		if !done {
			whole = 0
		}
	}
	for j := whole; j*panelWidth < n; j++ {
		panel := bp[j*pl : (j+1)*pl]
		scales := panel[64*kq+4*panelWidth:][:4*panelWidth]
		cols := min(panelWidth, n-j*panelWidth)
		for i, ch := range chans {
			codes := panel[(ch/4)*64+ch%4:][:64-ch%4]
			row := dst[(j*c+i)*panelWidth:][:panelWidth]
			for col := range cols {
				scale := math.Float32frombits(binary.LittleEndian.Uint32(scales[4*col:]))
				row[col] = float32(int8(codes[4*col])) * scale
			}
			clear(row[cols:])
		}
	}
}

// int8Scheme names this quantisation (its weight and input bits, its
// outlier rule) where vectors it made must not be taken for another's: in
// the embedding cache's keys. Change it with any of those.
const int8Scheme = "int8:w7a8:outliers8x6"
