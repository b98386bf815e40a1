package embed

import "math"

// Matrix products with bfloat16 operands and float32 accumulation, for
// CPUs with AVX-512 BF16 (VDPBF16PS): twice the multiply-adds of float32
// per instruction and half the weight bytes. B is packed once into panels
// of bf16PanelWidth columns holding, for each pair of rows (k pair) p, the
// dword (B[2p][j], B[2p+1][j]) per column j; A is converted row by row into
// the same k pairs. The float32 kernels stay the reference.

const (
	bf16PanelWidth = 32
	bf16TileRows   = 12
)

// bf16Kernel computes C[0:12][0:32] = A[0:12][0:2kp] · Bpanel, overwriting
// C; A rows are lda uint16s apart, C rows ldc floats apart.
type bf16Kernel func(kp int, a []uint16, lda int, b []uint16, c []float32, ldc int)

// toBF16 rounds f to the nearest bfloat16, ties to even. (A NaN may come
// out as infinity; the encoder's values are finite.)
func toBF16(f float32) uint16 {
	b := math.Float32bits(f)
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// fromBF16 widens a bfloat16 to float32, exactly.
func fromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// bf16Pairs is how many k pairs cover k.
func bf16Pairs(k int) int { return (k + 1) / 2 }

// bf16PackedLen is the length of B [k, n] packed into bf16 panels.
func bf16PackedLen(k, n int) int {
	return (n + bf16PanelWidth - 1) / bf16PanelWidth * bf16PanelWidth * 2 * bf16Pairs(k)
}

// packBF16NT packs Bᵀ for B stored [n, k] (PyTorch's [out, in] weights)
// into bf16 panels. Columns past n and the odd k's last pair half are zero.
func packBF16NT(dst []uint16, n, k int, b []float32) { packBF16Strided(dst, n, k, b, k) }

// bf16Chunk is how many values the packers round at a time.
const bf16Chunk = 64

// packBF16Strided packs Bᵀ for B stored [n, k] with row stride ldb into
// bf16 panels, rounding a chunk of each row at a time with SIMD: each k
// pair of a column is a pair of neighbours in B's row. Columns past n and
// the odd k's last pair half are zero.
func packBF16Strided(dst []uint16, n, k int, b []float32, ldb int) {
	kp := bf16Pairs(k)
	clear(dst[:bf16PackedLen(k, n)])
	var buf [bf16Chunk]uint16
	for col := range n {
		panel := dst[col/bf16PanelWidth*kp*2*bf16PanelWidth:]
		c := col % bf16PanelWidth
		for p0 := 0; p0 < k; p0 += bf16Chunk {
			row := b[col*ldb+p0 : col*ldb+min(p0+bf16Chunk, k)]
			roundBF16(buf[:len(row)], row)
			for i, v := range buf[:len(row)] {
				p := p0 + i
				panel[(p/2)*2*bf16PanelWidth+2*c+p%2] = v
			}
		}
	}
}

// roundBF16 rounds x into dst[:len(x)], with SIMD where the CPU has it.
func roundBF16(dst []uint16, x []float32) {
	if !rowToBF16SIMD(dst, x) {
		for i, v := range x {
			dst[i] = toBF16(v)
		}
	}
}

// rowsToBF16 converts m rows of x (k wide, lda apart) into dst, rows
// 2·bf16Pairs(k) apart, the odd k's last element padded with zero.
func rowsToBF16(dst []uint16, x []float32, m, k, lda int) {
	w := 2 * bf16Pairs(k)
	for r := range m {
		row, out := x[r*lda:r*lda+k], dst[r*w:(r+1)*w]
		roundBF16(out, row)
		if k < w {
			out[k] = 0
		}
	}
}

// kernelBF16Go is the portable bf16 micro-kernel, the reference the SIMD
// one is tested against: each product is exact in float32, and the pair is
// summed before it is added, as VDPBF16PS does up to rounding.
func kernelBF16Go(kp int, a []uint16, lda int, b []uint16, c []float32, ldc int) {
	var acc [bf16TileRows][bf16PanelWidth]float32
	for p := 0; p < kp; p++ {
		brow := b[p*2*bf16PanelWidth : (p+1)*2*bf16PanelWidth]
		for r := range bf16TileRows {
			a0, a1 := fromBF16(a[r*lda+2*p]), fromBF16(a[r*lda+2*p+1])
			row := &acc[r]
			for j := range bf16PanelWidth {
				row[j] += a0*fromBF16(brow[2*j]) + a1*fromBF16(brow[2*j+1])
			}
		}
	}
	for r := range bf16TileRows {
		copy(c[r*ldc:r*ldc+bf16PanelWidth], acc[r][:])
	}
}

// gemmBF16 holds a bf16 micro-kernel and the scratch for ragged edges.
type gemmBF16 struct {
	kern bf16Kernel
	amx  bool // whole blocks go to the AMX kernel first (gemm_amx_amd64.go)
	tmpA []uint16
	tmpC []float32
}

// mul computes C [m, n] = A [m, 2kp] · B for B packed by packBF16NT and A
// converted by rowsToBF16 (rows lda apart), overwriting C (rows ldc apart):
// with AMX the rows and columns of its whole blocks first, then the rest
// with the micro-kernel.
func (g *gemmBF16) mul(m, n, kp int, a []uint16, lda int, bp []uint16, c []float32, ldc int) {
	if emptyProduct(m, n, kp, c, ldc) {
		return
	}
	_ = a[(m-1)*lda+2*kp-1]
	_ = bp[(n+bf16PanelWidth-1)/bf16PanelWidth*bf16PanelWidth*2*kp-1]
	_ = c[(m-1)*ldc+n-1]
	pl := 2 * kp * bf16PanelWidth
	tiles := func(m, n int, a []uint16, bp []uint16, c []float32) {
		g.tmpA, g.tmpC = tiled(m, n, bf16TileRows, bf16PanelWidth, 2*kp, a, lda, pl, bp, c, ldc, g.tmpA, g.tmpC,
			func(a []uint16, lda int, panel []uint16, c []float32, ldc int) { g.kern(kp, a, lda, panel, c, ldc) })
	}
	rows, cols := g.mulAMX(m, n, kp, a, lda, bp, c, ldc)
	if rows == 0 {
		tiles(m, n, a, bp, c)
		return
	}
	if cols < n {
		tiles(rows, n-cols, a, bp[cols/bf16PanelWidth*pl:], c[cols:])
	}
	if rows < m {
		tiles(m-rows, n, a[rows*lda:], bp, c[rows*ldc:])
	}
}
