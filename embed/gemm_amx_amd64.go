package embed

import "golang.org/x/sys/cpu"

//go:generate go run ./internal/amxgen

// amxTiles reports whether this CPU has AMX tiles and the OS lets this
// process use them. It is set once, before main runs.
var amxTiles = cpu.X86.HasAMXTile && amxPermitted()

// hasAMX and hasAMXBF16 report whether this CPU runs the AMX int8 and
// bfloat16 kernels (gemm_amx_amd64.s) with the AVX-512 kernels that take
// the rows and columns outside their blocks.
var (
	hasAMX     = amxTiles && cpu.X86.HasAMXInt8 && hasVNNI
	hasAMXBF16 = amxTiles && cpu.X86.HasAMXBF16 && hasBF16
)

// gemmU8S8AMX is the AMX int8 kernel over whole blocks of 16 rows and
// groups of four panels (gemm_amx_amd64.s).
//
//go:noescape
func gemmU8S8AMX(kq int, a *byte, lda int, b *byte, panelLen int, c *float32, ldc int, blocks int, groups int, work *int32)

// Its blocks: 16 rows of A, four panels of B, 16 k quads a step.
const (
	amxRows  = 16
	amxCols  = 4 * panelWidth
	amxQuads = 16
)

// mulAMX computes what the AMX kernel can of C [m, n] = A · B (see
// gemmInt8.mul): every row, times the columns of whole groups of four
// panels, when k's quads are whole steps of 16; it returns those rows and
// columns (0, 0 when it computed nothing). Rows past the last whole block
// of 16 go through it zero-padded (amxTail): a block costs the tile unit
// about what one row costs the vector kernels, so a query's ten or so
// tokens are not left to them.
func (g *gemmInt8) mulAMX(m, n, k int, a []byte, lda int, bp []byte, c []float32, ldc int) (rows, cols int) {
	kq := int8Quads(k)
	cols = n / amxCols * amxCols
	if !g.amx || kq%amxQuads != 0 || cols == 0 {
		return 0, 0
	}
	g.work = resize(g.work, amxRows*amxCols)
	pl := int8PanelLen(k)
	g.tmpA, g.tmpC = amxTail(m, cols, int8RowLen(k), a, lda, c, ldc, g.tmpA, g.tmpC,
		func(a []byte, lda int, c []float32, ldc, blocks int) {
			gemmU8S8AMX(kq, &a[0], lda, &bp[0], pl, &c[0], ldc, blocks, cols/amxCols, &g.work[0])
		})
	return m, cols
}

// amxTail runs an AMX kernel (kern, over blocks of 16 rows) on the whole
// blocks of A's m rows (rw elements wide, lda apart) in place, and on the
// rows past them zero-padded to a block in scratch (tmpA, tmpC, returned
// grown), copying C's real rows (cols wide) back.
func amxTail[E any](m, cols, rw int, a []E, lda int, c []float32, ldc int, tmpA []E, tmpC []float32,
	kern func(a []E, lda int, c []float32, ldc, blocks int)) ([]E, []float32) {
	whole := m / amxRows * amxRows
	if whole > 0 {
		kern(a, lda, c, ldc, whole/amxRows)
	}
	tail := m - whole
	if tail == 0 {
		return tmpA, tmpC
	}
	tmpA, tmpC = resize(tmpA, amxRows*rw), resize(tmpC, amxRows*cols)
	for r := range tail {
		copy(tmpA[r*rw:(r+1)*rw], a[(whole+r)*lda:])
	}
	clear(tmpA[tail*rw:])
	kern(tmpA, rw, tmpC, cols, 1)
	for r := range tail {
		copy(c[(whole+r)*ldc:(whole+r)*ldc+cols], tmpC[r*cols:(r+1)*cols])
	}
	return tmpA, tmpC
}

// gemmBF16AMX is the AMX bfloat16 kernel over whole blocks of 16 rows and
// whole panels, the last block's rows of A from lastA and of C into lastC
// unless they are nil (gemm_amx_amd64.s).
//
//go:noescape
func gemmBF16AMX(kp int, a *uint16, lda int, b *uint16, c *float32, ldc int, blocks int, panels int, lastA *uint16, lastC *float32)

// amxPairs is the k pairs of one step of the bfloat16 kernel.
const amxPairs = 16

// mulAMX computes what the AMX kernel can of C [m, n] = A · B (see
// gemmBF16.mul): every row, times the columns of whole panels, when kp is
// whole steps; it returns those rows and columns (0, 0 when it computed
// nothing). Rows past the last whole block go through in the same call, as
// a block padded with whatever follows them in A (or, where A's capacity
// ends sooner, with their rows copied to scratch), its C rows to scratch
// and the real ones copied back: each panel of weights is read once for
// all the rows, a pack of questions' ragged end included.
func (g *gemmBF16) mulAMX(m, n, kp int, a []uint16, lda int, bp []uint16, c []float32, ldc int) (rows, cols int) {
	cols = n / bf16PanelWidth * bf16PanelWidth
	if !g.amx || kp%amxPairs != 0 || cols == 0 {
		return 0, 0
	}
	blocks := (m + amxRows - 1) / amxRows
	panels := cols / bf16PanelWidth
	last := (blocks - 1) * amxRows
	tail := m - last
	if tail == amxRows {
		gemmBF16AMX(kp, &a[0], lda, &bp[0], &c[0], ldc, blocks, panels, nil, nil)
		return m, cols
	}
	var lastA *uint16
	if cap(a) < (blocks*amxRows-1)*lda+2*kp {
		g.tmpA = resize(g.tmpA, (amxRows-1)*lda+2*kp)
		for r := range tail {
			copy(g.tmpA[r*lda:r*lda+2*kp], a[(last+r)*lda:])
		}
		lastA = &g.tmpA[0]
	}
	g.tmpC = resize(g.tmpC, (amxRows-1)*ldc+cols)
	gemmBF16AMX(kp, &a[0], lda, &bp[0], &c[0], ldc, blocks, panels, lastA, &g.tmpC[0])
	for r := range tail {
		copy(c[(last+r)*ldc:(last+r)*ldc+cols], g.tmpC[r*ldc:r*ldc+cols])
	}
	return m, cols
}
