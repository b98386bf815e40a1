package embed

// gemmNT computes C = A·Bᵀ for row-major A [m, k] (row stride lda),
// B [n, k] (row stride ldb) and C [m, n] (row stride ldc), overwriting C.
// Both operands are read along their rows, which is the layout of PyTorch's
// dense weights ([out, in]) and of the attention products.
func gemmNT(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	i := 0
	for ; i+4 <= m; i += 4 {
		a0 := a[i*lda : i*lda+k]
		a1 := a[(i+1)*lda : (i+1)*lda+k]
		a2 := a[(i+2)*lda : (i+2)*lda+k]
		a3 := a[(i+3)*lda : (i+3)*lda+k]
		j := 0
		for ; j+2 <= n; j += 2 {
			b0 := b[j*ldb : j*ldb+k]
			b1 := b[(j+1)*ldb : (j+1)*ldb+k]
			b1 = b1[:len(b0)]
			a0, a1, a2, a3 := a0[:len(b0)], a1[:len(b0)], a2[:len(b0)], a3[:len(b0)]
			var c00, c01, c10, c11, c20, c21, c30, c31 float32
			for p := range b0 {
				x0, x1 := b0[p], b1[p]
				y0, y1, y2, y3 := a0[p], a1[p], a2[p], a3[p]
				c00 += y0 * x0
				c01 += y0 * x1
				c10 += y1 * x0
				c11 += y1 * x1
				c20 += y2 * x0
				c21 += y2 * x1
				c30 += y3 * x0
				c31 += y3 * x1
			}
			c[i*ldc+j], c[i*ldc+j+1] = c00, c01
			c[(i+1)*ldc+j], c[(i+1)*ldc+j+1] = c10, c11
			c[(i+2)*ldc+j], c[(i+2)*ldc+j+1] = c20, c21
			c[(i+3)*ldc+j], c[(i+3)*ldc+j+1] = c30, c31
		}
		for ; j < n; j++ {
			b0 := b[j*ldb : j*ldb+k]
			c[i*ldc+j] = Dot(a0, b0)
			c[(i+1)*ldc+j] = Dot(a1, b0)
			c[(i+2)*ldc+j] = Dot(a2, b0)
			c[(i+3)*ldc+j] = Dot(a3, b0)
		}
	}
	for ; i < m; i++ {
		ai := a[i*lda : i*lda+k]
		for j := 0; j < n; j++ {
			c[i*ldc+j] = Dot(ai, b[j*ldb:j*ldb+k])
		}
	}
}

// Dot returns the inner product of a and b[:len(a)]; for unit vectors it
// is their cosine similarity, in [-1, 1].
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}
