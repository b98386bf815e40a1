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
// gemmInt8.mul): the rows of whole blocks of 16 times the columns of whole
// groups of four panels, when k's quads are whole steps of 16; it returns
// those rows and columns (0, 0 when it computed nothing).
func (g *gemmInt8) mulAMX(m, n, k int, a []byte, lda int, bp []byte, c []float32, ldc int) (rows, cols int) {
	kq := int8Quads(k)
	rows, cols = m/amxRows*amxRows, n/amxCols*amxCols
	if !g.amx || kq%amxQuads != 0 || rows == 0 || cols == 0 {
		return 0, 0
	}
	g.work = resize(g.work, amxRows*amxCols)
	gemmU8S8AMX(kq, &a[0], lda, &bp[0], int8PanelLen(k), &c[0], ldc, rows/amxRows, cols/amxCols, &g.work[0])
	return rows, cols
}

// gemmBF16AMX is the AMX bfloat16 kernel over whole blocks of 16 rows and
// groups of two panels (gemm_amx_amd64.s).
//
//go:noescape
func gemmBF16AMX(kp int, a *uint16, lda int, b *uint16, c *float32, ldc int, blocks int, groups int)

// amxPairs is the k pairs of one step of the bfloat16 kernel.
const amxPairs = 16

// mulAMX computes what the AMX kernel can of C [m, n] = A · B (see
// gemmBF16.mul), as gemmInt8.mulAMX does.
func (g *gemmBF16) mulAMX(m, n, kp int, a []uint16, lda int, bp []uint16, c []float32, ldc int) (rows, cols int) {
	rows, cols = m/amxRows*amxRows, n/amxCols*amxCols
	if !g.amx || kp%amxPairs != 0 || rows == 0 || cols == 0 {
		return 0, 0
	}
	gemmBF16AMX(kp, &a[0], lda, &bp[0], &c[0], ldc, rows/amxRows, cols/amxCols)
	return rows, cols
}
