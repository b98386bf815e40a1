package embed

import "golang.org/x/sys/cpu"

// sgemm6x16AVX2 is the AVX2+FMA micro-kernel (gemm_amd64.s).
//
//go:noescape
func sgemm6x16AVX2(k int, a *float32, lda int, b *float32, c *float32, ldc int)

// dotAVX2 is the AVX2+FMA inner product of n floats, n a positive multiple
// of 8 (gemm_amd64.s).
//
//go:noescape
func dotAVX2(a *float32, b *float32, n int) float32

// hasAVX2FMA reports whether this CPU runs the AVX2+FMA kernels. It is set
// once, from the CPU's features, before main runs.
var hasAVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dotSIMD returns the inner product of the longest prefix of a and b it
// handles, and that prefix's length.
func dotSIMD(a, b []float32) (float32, int) {
	n := len(a) &^ 7
	if !hasAVX2FMA || n == 0 {
		return 0, 0
	}
	return dotAVX2(&a[0], &b[0], n), n
}

// dots4AVX512 sets out[0:4] to dotAVX2(v, r0..r3, n) for four rows at
// once, n a positive multiple of 8 (gemm_avx512_amd64.s).
//
//go:noescape
func dots4AVX512(v *float32, r0, r1, r2, r3 *float32, n int, out *float32)

// dots4AVX2 sets out[0:4] to dotAVX2(v, r0..r3, n) for four rows at once,
// n a positive multiple of 32 (gemm_amd64.s).
//
//go:noescape
func dots4AVX2(v *float32, r0, r1, r2, r3 *float32, n int, out *float32)

// dots4SIMD returns dotSIMD(v, rows[j]) for the four rows, as one prefix
// length n and four sums, in one call: with AVX-512 one pass, with AVX2
// alone two where the length is a multiple of 32; n is 0 otherwise. The
// rows are as long as v.
func dots4SIMD(v []float32, rows *[4][]float32) (int, [4]float32) {
	var s [4]float32
	n := len(v) &^ 7
	switch {
	case !hasAVX2FMA || n == 0:
		return 0, s
	case hasAVX512:
		dots4AVX512(&v[0], &rows[0][0], &rows[1][0], &rows[2][0], &rows[3][0], n, &s[0])
	case n%32 != 0:
		return 0, s
	default:
		dots4AVX2(&v[0], &rows[0][0], &rows[1][0], &rows[2][0], &rows[3][0], n, &s[0])
	}
	return n, s
}

// dotsGrid3x4AVX2 sets out[4i+j] to dotAVX2(ai, bj, n), the same bits,
// for three rows of a and four of b, n a positive multiple of 32; scratch
// holds 192 floats (gemm_amd64.s).
//
//go:noescape
func dotsGrid3x4AVX2(a0, a1, a2, b0, b1, b2, b3 *float32, n int, out *float32, scratch *float32)

// dotsGridSIMD sets DotsGrid's out, three rows of a by four of b at a
// time, where the CPU has AVX2 but not AVX-512 (there Dots4 reads each
// row of b once for four of a) and the rows' length is a multiple of 32;
// a ragged edge repeats its last row, whose products are not kept. It
// reports whether it did.
func dotsGridSIMD(a, b [][]float32, out []float32) bool {
	n := len(a[0])
	if hasAVX512 || !hasAVX2FMA || n == 0 || n%32 != 0 {
		return false
	}
	var scratch [192]float32
	var s [12]float32
	row := func(rows [][]float32, i int) *float32 { return &rows[min(i, len(rows)-1)][0] }
	// Six rows of a (three each call) meet each four of b while those
	// four are in the core's first-level cache: 30 KB at 768 dimensions.
	for i6 := 0; i6 < len(a); i6 += 6 {
		for j := 0; j < len(b); j += 4 {
			b0, b1, b2, b3 := row(b, j), row(b, j+1), row(b, j+2), row(b, j+3)
			for i := i6; i < min(i6+6, len(a)); i += 3 {
				dotsGrid3x4AVX2(row(a, i), row(a, i+1), row(a, i+2), b0, b1, b2, b3, n, &s[0], &scratch[0])
				for ii := i; ii < min(i+3, len(a)); ii++ {
					for jj := j; jj < min(j+4, len(b)); jj++ {
						// Nothing is past the kernel's elements; Dot adds
						// zeros there, which change no sum begun at +0.
						out[ii*len(b)+jj] = s[4*(ii-i)+jj-j]
					}
				}
			}
		}
	}
	return true
}

// dequantAVX2 sets dst[i] = scale·float32(int8(codes[i])) for i < n, n a
// positive multiple of 8 (gemm_amd64.s).
//
//go:noescape
func dequantAVX2(dst *float32, codes *byte, n int, scale float32)

// dequantSIMD sets Dequantize's dst over the longest prefix it handles,
// in 8-element steps with AVX2, and returns its length.
func dequantSIMD(dst []float32, codes []byte, scale float32) int {
	n := len(codes) &^ 7
	if !hasAVX2FMA || n == 0 {
		return 0
	}
	dequantAVX2(&dst[0], &codes[0], n, scale)
	return n
}

// dotsInt8VNNI sets out[r] to Σ q[i]·rows[r·stride+i] over i < n for
// r < count, n a positive multiple of 64 (gemm_vnni_amd64.s), with AVX-512
// VNNI: for 768 codes about half the time of the AVX2 kernel's sign
// extension it replaced.
//
//go:noescape
func dotsInt8VNNI(q *int8, rows *int8, stride int, n int, count int, out *int32)

// dotsInt8VNNICached sets out as dotsInt8VNNI does, four rows at a time
// (gemm_vnni_amd64.s): faster over rows in the core's cache, slower over
// rows read from memory.
//
//go:noescape
func dotsInt8VNNICached(q *int8, rows *int8, stride int, n int, count int, out *int32)

// dotsInt8AVX2 sets out[r] to Σ q[i]·rows[r·stride+i] over i < n for
// r < count, n a positive multiple of 32 and the rows' codes in [-127,
// 127] (gemm_int8_amd64.s).
//
//go:noescape
func dotsInt8AVX2(q *int8, rows *int8, stride int, n int, count int, out *int32)

// dotsInt8SIMD sets out[r] to q's inner product with rows[r·stride:] in
// one call when it can, and reports whether it did; cached as DotsInt8's.
func dotsInt8SIMD(q, rows []int8, stride int, out []int32, cached bool) bool {
	if len(q) == 0 || len(out) == 0 {
		return false
	}
	if !hasVNNI || len(q)%64 != 0 {
		if !hasAVX2FMA || len(q)%32 != 0 {
			return false
		}
		dotsInt8AVX2(&q[0], &rows[0], stride, len(q), len(out), &out[0])
		return true
	}
	if cached {
		dotsInt8VNNICached(&q[0], &rows[0], stride, len(q), len(out), &out[0])
	} else {
		dotsInt8VNNI(&q[0], &rows[0], stride, len(q), len(out), &out[0])
	}
	return true
}

// dotsInt8VNNIFour sets out[j][r] to Σ q[j][i]·rows[r·stride+i] over
// i < n for four queries j and r < count, n a positive multiple of 64 and
// count a positive multiple of 4 (gemm_vnni_amd64.s): four rows meet four
// queries a step.
//
//go:noescape
func dotsInt8VNNIFour(q *[4]*int8, rows *int8, stride int, n int, count int, out *[4]*int32)

// dotsInt8AVX2Four sets out[j][r] to Σ q[j][i]·rows[r·stride+i] over
// i < n for four queries j and r < count, n a positive multiple of 32 and
// the rows' codes in [-127, 127] (gemm_int8_amd64.s): dotsInt8AVX2's
// arithmetic, each row read once for the four queries.
//
//go:noescape
func dotsInt8AVX2Four(q *[4]*int8, rows *int8, stride int, n int, count int, out *[4]*int32)

// dotsInt8FourSIMD sets out[j][r] to q[j]'s inner product with
// rows[r·stride:] for four queries of one length in one call when it can,
// and reports whether it did; distinct of the four are different queries,
// the rest repeat one. VNNI's kernel takes groups of at least two: over
// rows from memory it waits mostly on memory, so that a pair is worth
// making four where the CPU has two 512-bit units (0.85 against 1.26 ms
// for two queries each alone over 29,184 rows of 768 codes, Intel Xeon
// with AMX), though not quite where it has one (AMD EPYC Zen 4: 1.06–1.22
// against 0.84–0.90); but a lone query costs four there (0.82–1.03
// against 0.53–0.56 ms alone on Zen 4, 0.95 against 1.02 on the Xeon),
// so it goes alone. AVX2's is bound by its arithmetic, so that a repeated
// query costs what another would, and it takes groups of at least three
// (on an AMD EPYC Zen 3, BenchmarkDotsInt8Many: 1.76–1.83 against
// 2.39–2.53 ms for four queries each alone, 1.76–1.80 against 1.92–2.17
// for three, but 1.77–1.85 against 1.30–1.42 for two).
func dotsInt8FourSIMD(q *[4][]int8, distinct int, rows []int8, stride int, out *[4][]int32) bool {
	n, count := len(q[0]), len(out[0])
	if n == 0 || count == 0 {
		return false
	}
	var qp [4]*int8
	var op [4]*int32
	for j := range q {
		qp[j], op[j] = &q[j][0], &out[j][0]
	}
	if distinct < 2 {
		return false
	}
	if !hasVNNI || n%64 != 0 || count < 4 {
		if !hasAVX2FMA || n%32 != 0 || distinct < 3 {
			return false
		}
		dotsInt8AVX2Four(&qp, &rows[0], stride, n, count, &op)
		return true
	}
	whole := count &^ 3
	dotsInt8VNNIFour(&qp, &rows[0], stride, n, whole, &op)
	if whole < count {
		for j := range q {
			dotsInt8VNNICached(&q[j][0], &rows[whole*stride], stride, n, count-whole, &out[j][whole])
		}
	}
	return true
}

// dotInt8SIMD returns Σ a[i]·b[i] over the longest prefix it handles, and
// that prefix's length: in 64-element steps with VNNI, else in 32-element
// steps with AVX2.
func dotInt8SIMD(a, b []int8) (int32, int) {
	if n := len(a) &^ 63; hasVNNI && n > 0 {
		var d int32
		dotsInt8VNNI(&a[0], &b[0], 0, n, 1, &d)
		return d, n
	}
	n := len(a) &^ 31
	if !hasAVX2FMA || n == 0 {
		return 0, 0
	}
	var d int32
	dotsInt8AVX2(&a[0], &b[0], 0, n, 1, &d)
	return d, n
}

// kernelAVX2 adapts the assembly kernel to the kernel signature.
func kernelAVX2(k int, a []float32, lda int, b []float32, c []float32, ldc int) {
	sgemm6x16AVX2(k, &a[0], lda, &b[0], &c[0], ldc)
}

// sgemm12x32AVX512 is the AVX-512 micro-kernel over two panels
// (gemm_avx512_amd64.s).
//
//go:noescape
func sgemm12x32AVX512(k int, a *float32, lda int, b *float32, c *float32, ldc int)

func kernelAVX512(k int, a []float32, lda int, b []float32, c []float32, ldc int) {
	sgemm12x32AVX512(k, &a[0], lda, &b[0], &c[0], ldc)
}

// simdKernels lists the SIMD kernel sets this CPU runs, for each
// arithmetic the likeliest fastest first: float32 on AVX-512's 12×32
// tiles where they fit (AVX2+FMA's 6×16 for the rest) and on AVX2+FMA's
// alone; bfloat16 on AMX's TDPBF16PS in blocks of 16 rows by two panels
// (VDPBF16PS for the rest) and on VDPBF16PS; int8 on AMX's TDPBUSD in blocks of 16
// rows by four panels (VNNI and AVX2 for the rest), on AVX-512 VNNI's
// VPDPBUSD in groups of four panels (AVX2 for the rest) and on AVX2's
// VPMADDUBSW.
// The sets of other arithmetics run their float32 work (an int8 product's
// outlier channels) on the first float32 set.
func simdKernels() []kernels {
	if !hasAVX2FMA {
		return nil
	}
	avx2 := kernels{arith: arithFP32, name: "avx2+fma", f32: kernelAVX2, fmaSums: true}
	fp := avx2
	var sets []kernels
	if hasAVX512 {
		fp = kernels{arith: arithFP32, name: "avx512+fma", f32: kernelAVX2, fmaSums: true,
			f32Wide: wideKernel[float32]{kern: kernelAVX512, rows: 12, cols: 2 * panelWidth}}
		sets = append(sets, fp)
	}
	sets = append(sets, avx2)
	with := func(a arithmetic, name string) kernels {
		k := fp
		k.arith, k.name = a, name
		k.fusedOutliers = a == arithInt8 && k.fmaSums && hasAVX512 // outlierRowsAVX512's pass
		return k
	}
	if hasAMXBF16 {
		k := with(arithBF16, "amx-bf16")
		k.bf16, k.bf16AMX = kernelBF16AVX512, true
		sets = append(sets, k)
	}
	if hasBF16 {
		k := with(arithBF16, "avx512-bf16")
		k.bf16 = kernelBF16AVX512
		sets = append(sets, k)
	}
	vnni := wideKernel[byte]{kern: kernelInt8VNNI, rows: tileRows, cols: 4 * panelWidth}
	if hasAMX {
		k := with(arithInt8, "amx-int8")
		k.int8, k.int8Wide, k.int8AMX = kernelInt8AVX2, vnni, true
		sets = append(sets, k)
	}
	if hasVNNI {
		k := with(arithInt8, "avx512-vnni")
		k.int8, k.int8Wide = kernelInt8AVX2, vnni
		sets = append(sets, k)
	}
	k := with(arithInt8, "avx2-u8s8")
	k.int8 = kernelInt8AVX2
	return append(sets, k)
}

// scaledAboveAVX2 is ScaledAbove's whole steps of 8 (gemm_amd64.s).
//
//go:noescape
func scaledAboveAVX2(dots *int32, scales *float32, n int, scale, floor float32, idx *int32) int

// scaledAboveAVX512 is ScaledAbove's whole steps of 16 (gemm_vnni_amd64.s).
//
//go:noescape
func scaledAboveAVX512(dots *int32, scales *float32, n int, scale, floor float32, idx *int32) int

// scaledAboveSIMD runs ScaledAbove over the longest prefix of dots it
// handles, and returns the count and that prefix's length; idx has room
// for 16 past len(dots).
func scaledAboveSIMD(dots []int32, scales []float32, scale, floor float32, idx []int32) (count, done int) {
	switch n := len(dots) &^ 15; {
	case hasAVX512 && n > 0:
		_, _ = scales[n-1], idx[n+15]
		return scaledAboveAVX512(&dots[0], &scales[0], n, scale, floor, &idx[0]), n
	case hasAVX2FMA && len(dots) >= 8:
		n = len(dots) &^ 7
		_, _ = scales[n-1], idx[n-1]
		return scaledAboveAVX2(&dots[0], &scales[0], n, scale, floor, &idx[0]), n
	}
	return 0, 0
}
