package embed

// Matrix products for the encoder. B operands are packed once into panels
// of panelWidth columns (k rows of panelWidth contiguous floats), so a
// micro-kernel computes a tileRows×panelWidth tile of C reading A along its
// rows and B along its panel: the layout SIMD kernels want.

const (
	panelWidth = 16
	tileRows   = 6
)

// kernel computes C[0:6][0:16] = A[0:6][0:k] · Bpanel[0:k][0:16], with A
// rows lda apart and C rows ldc apart, overwriting C. The slices must hold
// the whole tile.
type kernel func(k int, a []float32, lda int, b []float32, c []float32, ldc int)

// kernelGo is the portable micro-kernel, and the reference the SIMD kernels
// are tested against.
func kernelGo(k int, a []float32, lda int, b []float32, c []float32, ldc int) {
	var acc [tileRows][panelWidth]float32
	for p := 0; p < k; p++ {
		brow := b[p*panelWidth : p*panelWidth+panelWidth]
		for r := range tileRows {
			x := a[r*lda+p]
			row := &acc[r]
			for j, y := range brow {
				row[j] += x * y
			}
		}
	}
	for r := range tileRows {
		copy(c[r*ldc:r*ldc+panelWidth], acc[r][:])
	}
}

// packedLen is the length of B [k, n] packed into panels.
func packedLen(k, n int) int { return (n + panelWidth - 1) / panelWidth * panelWidth * k }

// packNT packs Bᵀ for B stored [n, k] with row stride ldb (PyTorch's
// [out, in] weights, or the keys of attention): panel j row p holds
// B[j·16 .. j·16+15][p]. Columns past n are zero.
func packNT[E float32 | uint16](dst []E, n, k int, b []E, ldb int) {
	for j := 0; j*panelWidth < n; j++ {
		panel := dst[j*k*panelWidth : (j+1)*k*panelWidth]
		for c := 0; c < panelWidth; c++ {
			col := j*panelWidth + c
			if col >= n {
				for p := 0; p < k; p++ {
					panel[p*panelWidth+c] = 0
				}
				continue
			}
			src := b[col*ldb : col*ldb+k]
			for p, v := range src {
				panel[p*panelWidth+c] = v
			}
		}
	}
}

// packNN packs B stored [k, n] with row stride ldb (the values of
// attention): panel j row p holds B[p][j·16 .. j·16+15]. Columns past n are
// zero.
func packNN(dst []float32, k, n int, b []float32, ldb int) {
	for j := 0; j*panelWidth < n; j++ {
		panel := dst[j*k*panelWidth : (j+1)*k*panelWidth]
		cols := min(panelWidth, n-j*panelWidth)
		for p := 0; p < k; p++ {
			row := panel[p*panelWidth : (p+1)*panelWidth]
			copy(row, b[p*ldb+j*panelWidth:p*ldb+j*panelWidth+cols])
			clear(row[cols:])
		}
	}
}

// gemm holds the micro-kernels and the scratch space for ragged edges.
type gemm struct {
	kern  kernel
	wide  wideKernel[float32]
	tmpA  []float32 // tileRows×k rows of A padded with zeros
	tmpC  []float32 // one tileRows×panelWidth tile
	panel []float32 // one panel of B widened from halves
}

// mulHalf computes C [m, n] = A [m, k] · B as mul does, for B's values
// IEEE halves packed by packNT: each panel is widened into g.panel before
// its tiles are computed, so the products are exactly those of B widened
// to float32, at half the bytes read from memory (a short text's layers
// wait on their weights' bytes, not on the multiply-adds).
func (g *gemm) mulHalf(m, n, k int, a []float32, lda int, bh []uint16, c []float32, ldc int) {
	if emptyProduct(m, n, k, c, ldc) {
		return
	}
	// As many panels at a time as the wide kernel takes.
	group := 1
	if g.wide.kern != nil {
		group = g.wide.cols / panelWidth
	}
	pl := k * panelWidth
	g.panel = resize(g.panel, group*pl)
	packed := packedLen(k, n)
	_ = bh[packed-1]
	for j := 0; j*panelWidth < n; j += group {
		col := j * panelWidth
		panels := bh[j*pl : min((j+group)*pl, packed)]
		halvesToFloats(g.panel, panels)
		g.mul(m, min(group*panelWidth, n-col), k, a, lda, g.panel[:len(panels)], c[col:], ldc)
	}
}

// emptyProduct reports whether C [m, n] = A [m, k] · B has nothing to
// multiply (m, n or k zero), having cleared C for k = 0.
func emptyProduct(m, n, k int, c []float32, ldc int) bool {
	if m == 0 || n == 0 {
		return true
	}
	if k == 0 {
		for i := range m {
			clear(c[i*ldc : i*ldc+n])
		}
		return true
	}
	return false
}

// mul computes C [m, n] = A [m, k] · B, for B packed by packNT or packNN,
// overwriting C. A rows are lda apart, C rows ldc apart.
func (g *gemm) mul(m, n, k int, a []float32, lda int, bp []float32, c []float32, ldc int) {
	if emptyProduct(m, n, k, c, ldc) {
		return
	}
	// Bounds, checked once so the kernel may read and write without them.
	_ = a[(m-1)*lda+k-1]
	_ = bp[packedLen(k, n)-1]
	_ = c[(m-1)*ldc+n-1]

	g.tmpA, g.tmpC = tiledWide(m, n, tileRows, panelWidth, k, k, a, lda, k*panelWidth, bp, c, ldc, g.tmpA, g.tmpC, g.kern, g.wide)
}

// wideKernel is a micro-kernel for tiles larger than a product's narrow
// one: rows×cols, its panel being cols/panelWidth consecutive panels (so
// the narrow kernel's panel length times as many). kern is nil where the
// CPU has none.
type wideKernel[E any] struct {
	kern       func(k int, a []E, lda int, b []E, c []float32, ldc int)
	rows, cols int
}

// tiledWide computes C [m, n] as tiled does with narrow rows×width tiles
// of kern, except where the wide kernel's tiles fit: all of C's rows in
// them when they are as many as narrow ones (the last padded), else the
// whole blocks of wide.rows, over the columns of whole wide panels; the
// rest of the columns and rows go narrow. k is the kernels' first
// argument.
func tiledWide[E any](m, n, rows, width, aw, k int, a []E, lda, panelLen int, bp []E, c []float32, ldc int,
	tmpA []E, tmpC []float32, kern func(k int, a []E, lda int, b []E, c []float32, ldc int), wide wideKernel[E]) ([]E, []float32) {
	narrow := func(m, n int, a []E, bp []E, c []float32) {
		tmpA, tmpC = tiled(m, n, rows, width, aw, a, lda, panelLen, bp, c, ldc, tmpA, tmpC,
			func(a []E, lda int, panel []E, c []float32, ldc int) { kern(k, a, lda, panel, c, ldc) })
	}
	if wide.kern == nil {
		narrow(m, n, a, bp, c)
		return tmpA, tmpC
	}
	mw, nw := m, n/wide.cols*wide.cols
	if wide.rows != rows {
		mw = m / wide.rows * wide.rows
		// More rows left than one narrow tile holds: the wide kernel
		// takes them zero-padded, in as many multiply-adds as two narrow
		// tiles at twice their width (a query's ten or so tokens are all
		// such rows).
		if m-mw > rows {
			mw = m
		}
	}
	if mw == 0 || nw == 0 {
		narrow(m, n, a, bp, c)
		return tmpA, tmpC
	}
	tmpA, tmpC = tiled(mw, nw, wide.rows, wide.cols, aw, a, lda, wide.cols/width*panelLen, bp, c, ldc, tmpA, tmpC,
		func(a []E, lda int, panels []E, c []float32, ldc int) { wide.kern(k, a, lda, panels, c, ldc) })
	if nw < n {
		narrow(mw, n-nw, a, bp[nw/width*panelLen:], c[nw:])
	}
	if mw < m {
		narrow(m-mw, n, a[mw*lda:], bp, c[mw*ldc:])
	}
	return tmpA, tmpC
}

// tiled computes C [m, n] tile by tile with kern, which writes one
// rows×width tile of C from rows of A (rows aw elements wide, lda apart)
// and one panel of B (panelLen elements; panel j starts at j·panelLen of
// bp). The last rows of A go through a zero-padded copy (tmpA) and ragged
// columns through a scratch tile (tmpC); both are grown as needed and
// returned for reuse. The float32, bfloat16 and int8 products share it.
func tiled[E any](m, n, rows, width, aw int, a []E, lda, panelLen int, bp []E, c []float32, ldc int,
	tmpA []E, tmpC []float32, kern func(a []E, lda int, panel []E, c []float32, ldc int)) ([]E, []float32) {
	full := m / rows * rows
	rest := m - full
	if rest > 0 {
		// Copy the last rows of A into a zero-padded full tile.
		if cap(tmpA) < rows*aw {
			tmpA = make([]E, rows*aw)
		}
		tmpA = tmpA[:rows*aw]
		clear(tmpA)
		for r := range rest {
			copy(tmpA[r*aw:(r+1)*aw], a[(full+r)*lda:(full+r)*lda+aw])
		}
	}
	if len(tmpC) < rows*width {
		tmpC = make([]float32, rows*width)
	}
	for j := 0; j*width < n; j++ {
		panel := bp[j*panelLen : (j+1)*panelLen]
		col := j * width
		cols := min(width, n-col)
		for i := 0; i < full; i += rows {
			if cols == width {
				kern(a[i*lda:], lda, panel, c[i*ldc+col:], ldc)
				continue
			}
			kern(a[i*lda:], lda, panel, tmpC, width)
			for r := range rows {
				copy(c[(i+r)*ldc+col:(i+r)*ldc+col+cols], tmpC[r*width:])
			}
		}
		if rest > 0 {
			kern(tmpA, aw, panel, tmpC, width)
			for r := range rest {
				copy(c[(full+r)*ldc+col:(full+r)*ldc+col+cols], tmpC[r*width:])
			}
		}
	}
	return tmpA, tmpC
}

// Dot returns the inner product of a and b[:len(a)]; for unit vectors it
// is their cosine similarity, in [-1, 1].
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	s, i := dotSIMD(a, b)
	return dotFrom(a, b, i, s)
}

// Dots4 sets out[i] to Dot(rows[i], v) for four rows as long as v, the
// same bits as Dot's, in one call where the CPU has AVX-512 (one pass) or
// AVX2 (two, for lengths a multiple of 32): v read once for the four, and
// four rows from memory in flight at once (an index's rescoring of the
// rows its first pass kept).
func Dots4(v []float32, rows *[4][]float32, out *[4]float32) {
	for _, r := range rows {
		if len(r) != len(v) {
			panic("embed: Dots4: a row's length is not v's")
		}
	}
	n, s := dots4SIMD(v, rows)
	for j, r := range rows {
		if n == 0 {
			out[j] = Dot(r, v)
			continue
		}
		out[j] = dotFrom(r, v, n, s[j])
	}
}

// DotsGrid sets out[i*len(b)+j] to Dot(a[i], b[j]), the same bits, for
// every row of a and of b, all as long as a[0]; out holds len(a)·len(b).
// Where the CPU has AVX2 without AVX-512 and the length is a multiple of
// 32, three rows of a meet four of b in one call (a step reads seven
// rows' floats for twelve products), each product still summed as Dot
// sums it; with AVX-512 four rows of a meet each row of b (Dots4);
// elsewhere, a Dot a pair. It is a recommendation's votes: a few
// candidates against every member.
func DotsGrid(a, b [][]float32, out []float32) {
	if len(a) == 0 || len(b) == 0 {
		return
	}
	n := len(a[0])
	for _, rows := range [2][][]float32{a, b} {
		for _, r := range rows {
			if len(r) != n {
				panic("embed: DotsGrid: rows of different lengths")
			}
		}
	}
	out = out[:len(a)*len(b)]
	if dotsGridSIMD(a, b, out) {
		return
	}
	i := 0
	for ; i+4 <= len(a); i += 4 {
		rows := [4][]float32(a[i : i+4])
		var s [4]float32
		for j, v := range b {
			Dots4(v, &rows, &s)
			for k, x := range s {
				out[(i+k)*len(b)+j] = x
			}
		}
	}
	for ; i < len(a); i++ {
		for j, v := range b {
			out[i*len(b)+j] = Dot(a[i], v)
		}
	}
}

// dotFrom is Dot's sum of a[i]·b[i] from i on, added to s, the sum of
// the elements before i (what the SIMD kernel left).
func dotFrom(a, b []float32, i int, s float32) float32 {
	var s0, s1, s2, s3 float32
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s + s0 + s1 + s2 + s3
}
