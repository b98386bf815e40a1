package embed

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func randomMatrix(r *rand.Rand, n int) []float32 {
	m := make([]float32, n)
	for i := range m {
		m[i] = float32(r.NormFloat64())
	}
	return m
}

// naiveNT is C = A·Bᵀ by the definition, in float64.
func naiveNT(m, n, k int, a []float32, lda int, b []float32, ldb int) []float64 {
	c := make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				s += float64(a[i*lda+p]) * float64(b[j*ldb+p])
			}
			c[i*n+j] = s
		}
	}
	return c
}

// gemmKernels are the float32 products this build and CPU have, by name:
// the portable kernel's, and every SIMD set's, a set with a wide kernel
// also without it.
func gemmKernels(t testing.TB) map[string]gemm {
	return kernelVariants(t, arithFP32, gemm{kern: kernelGo}, []string{"avx512+fma"}, func(k kernels, wide bool) (gemm, bool) {
		if wide {
			return gemm{kern: k.f32, wide: k.f32Wide}, k.f32Wide.kern != nil
		}
		return gemm{kern: k.f32}, true
	})
}

// kernelVariants returns, by name, the products of arithmetic a this
// build and CPU have: the portable one's, and every SIMD set's as of
// makes it, a set with a wide kernel also without it ("/narrow"). It logs
// what it leaves untested: every SIMD set when there is none, each set
// named in expected that the CPU lacks.
func kernelVariants[G any](t testing.TB, a arithmetic, portable G, expected []string, of func(k kernels, wide bool) (G, bool)) map[string]G {
	out := map[string]G{"go": portable}
	for _, k := range simdOf(a) {
		g, _ := of(k, false)
		out[k.name] = g
		if g, ok := of(k, true); ok {
			out[k.name], out[k.name+"/narrow"] = g, out[k.name]
		}
	}
	if len(out) == 1 {
		t.Logf("this CPU has no SIMD %s kernel: only the portable one is tested", a.precision())
		return out
	}
	for _, name := range expected {
		if _, ok := out[name]; !ok {
			t.Logf("this CPU lacks the features of %s: it is not tested here", name)
		}
	}
	return out
}

// TestGemmKernels checks every micro-kernel this build has, on ragged shapes
// and strides, against the definition.
func TestGemmKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := [][3]int{{1, 1, 1}, {6, 16, 1}, {7, 17, 3}, {5, 15, 32}, {13, 40, 31}, {64, 384, 384}, {250, 32, 250}, {3, 1536, 7},
		{12, 32, 1}, {25, 70, 9}, {24, 96, 384}, {13, 33, 2}}
	for kname, g := range gemmKernels(t) {
		for _, s := range shapes {
			m, n, k := s[0], s[1], s[2]
			t.Run(fmt.Sprintf("%s/%dx%dx%d", kname, m, n, k), func(t *testing.T) {
				lda, ldb, ldc := k+3, k+1, n+5 // strides wider than the rows
				a := randomMatrix(r, m*lda)
				b := randomMatrix(r, n*ldb)
				c := randomMatrix(r, m*ldc) // garbage that must be overwritten
				before := append([]float32(nil), c...)
				bp := make([]float32, packedLen(k, n))
				packNT(bp, n, k, b, ldb)
				g.mul(m, n, k, a, lda, bp, c, ldc)
				want := naiveNT(m, n, k, a, lda, b, ldb)
				for i := range m {
					for j := range n {
						got, w := float64(c[i*ldc+j]), want[i*n+j]
						if math.Abs(got-w) > 1e-4*(1+math.Sqrt(float64(k))) {
							t.Fatalf("C[%d][%d] = %g, want %g", i, j, got, w)
						}
					}
					// Nothing beyond the n columns of a row is touched.
					for j := n; j < ldc; j++ {
						if c[i*ldc+j] != before[i*ldc+j] {
							t.Fatalf("C[%d][%d], past the %d columns, was overwritten", i, j, n)
						}
					}
				}
			})
		}
	}
}

func TestPackNN(t *testing.T) {
	// Packing B [k, n] directly equals packing its transpose as [n, k].
	r := rand.New(rand.NewPCG(3, 4))
	k, n, ldb := 9, 21, 25
	b := randomMatrix(r, k*ldb)
	bt := make([]float32, n*k)
	for p := range k {
		for j := range n {
			bt[j*k+p] = b[p*ldb+j]
		}
	}
	x, y := make([]float32, packedLen(k, n)), make([]float32, packedLen(k, n))
	packNN(x, k, n, b, ldb)
	packNT(y, n, k, bt, k)
	for i := range x {
		if x[i] != y[i] {
			t.Fatalf("packed element %d: %g vs %g", i, x[i], y[i])
		}
	}
}

// BenchmarkGemm measures the encoder's largest product, 256 tokens through
// the 384→1536 feed-forward layer, in GFLOP/s per core.
func BenchmarkGemm(b *testing.B) {
	for name, g := range gemmKernels(b) {
		b.Run(name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(5, 6))
			m, n, k := 256, 1536, 384
			a, w := randomMatrix(r, m*k), randomMatrix(r, n*k)
			bp := make([]float32, packedLen(k, n))
			packNT(bp, n, k, w, k)
			c := make([]float32, m*n)
			for b.Loop() {
				g.mul(m, n, k, a, k, bp, c, n)
			}
			b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func TestDot(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 384, 1000} {
		a, b := randomMatrix(r, n), randomMatrix(r, n+3)
		var want float64
		for i := range n {
			want += float64(a[i]) * float64(b[i])
		}
		if got := float64(Dot(a, b)); math.Abs(got-want) > 1e-4*(1+math.Sqrt(float64(n))) {
			t.Errorf("n=%d: Dot = %g, want %g", n, got, want)
		}
	}
}

// TestDots4: each of Dots4's results is Dot's, bit for bit, either way
// round, for lengths the four-row kernel takes whole, in part (a tail past
// its eights) and not at all.
func TestDots4(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for _, n := range []int{5, 8, 40, 384, 768, 770, 1152} {
		for range 5 {
			v := randomMatrix(r, n)
			var rows [4][]float32
			for i := range rows {
				rows[i] = randomMatrix(r, n)
			}
			var out [4]float32
			Dots4(v, &rows, &out)
			for i, row := range rows {
				a, b := Dot(row, v), Dot(v, row)
				if math.Float32bits(out[i]) != math.Float32bits(a) || math.Float32bits(a) != math.Float32bits(b) {
					t.Fatalf("n=%d row %d: %v, Dot gives %v and %v", n, i, out[i], a, b)
				}
			}
		}
	}
}

// TestDotsGrid: each of DotsGrid's products is Dot's, bit for bit, for
// shapes whole in the kernel's three by four and ragged on either side,
// and for lengths it takes (multiples of 32) and those it leaves to Dot.
func TestDotsGrid(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, n := range []int{5, 8, 40, 32, 384, 768, 770, 1152} {
		for _, shape := range [][2]int{{1, 1}, {3, 4}, {2, 1}, {4, 5}, {7, 50}, {12, 3}, {5, 9}} {
			a, b := make([][]float32, shape[0]), make([][]float32, shape[1])
			for i := range a {
				a[i] = randomMatrix(r, n)
			}
			for j := range b {
				b[j] = randomMatrix(r, n)
			}
			out := make([]float32, len(a)*len(b)+1)
			out[len(out)-1] = 42
			DotsGrid(a, b, out)
			for i := range a {
				for j := range b {
					want := Dot(a[i], b[j])
					if got := out[i*len(b)+j]; math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("n=%d shape %v (%d, %d): %v, Dot gives %v", n, shape, i, j, got, want)
					}
				}
			}
			if out[len(out)-1] != 42 {
				t.Fatalf("n=%d shape %v: wrote past its products", n, shape)
			}
		}
	}
}

// BenchmarkVotes is a recommendation's votes: 64 candidates' cosines with
// 50 members' 768-dimension vectors, four candidates at a time against
// each member (Dots4) and a Dot a pair.
func BenchmarkVotes(b *testing.B) {
	r := rand.New(rand.NewPCG(21, 22))
	cands, members := make([][]float32, 64), make([][]float32, 50)
	for i := range cands {
		cands[i] = randomMatrix(r, 768)
	}
	for i := range members {
		members[i] = randomMatrix(r, 768)
	}
	var sink float32
	b.Run("Dots4", func(b *testing.B) {
		for b.Loop() {
			for i := 0; i < len(cands); i += 4 {
				rows := [4][]float32(cands[i : i+4])
				var out [4]float32
				for _, m := range members {
					Dots4(m, &rows, &out)
					sink += out[0]
				}
			}
		}
	})
	b.Run("grid", func(b *testing.B) {
		out := make([]float32, 12*len(members))
		for b.Loop() {
			for i := 0; i < len(cands); i += 12 {
				DotsGrid(cands[i:min(i+12, len(cands))], members, out)
				sink += out[0]
			}
		}
	})
	b.Run("Dot", func(b *testing.B) {
		for b.Loop() {
			for _, c := range cands {
				for _, m := range members {
					sink += Dot(m, c)
				}
			}
		}
	})
	_ = sink
}

// BenchmarkDot384 is one dense-scan step: the inner product of two
// 384-dimensional vectors.
func BenchmarkDot384(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	x, y := randomMatrix(r, 384), randomMatrix(r, 384)
	var s float32
	for b.Loop() {
		s += Dot(x, y)
	}
	_ = s
}

// TestScaledAbove: the positions whose scaled sums reach the floor, with
// SIMD where the CPU has it, are the definition's, in order, for lengths
// with and without a tail past whole steps and floors that pass all,
// none and some (ties included).
func TestScaledAbove(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	for _, n := range []int{0, 1, 5, 16, 17, 40, 256, 300} {
		dots, scales := make([]int32, n), make([]float32, n)
		for i := range dots {
			dots[i] = r.Int32N(2_000_001) - 1_000_000
			scales[i] = r.Float32() * 1e-4
		}
		const scale = 0.37
		floors := []float32{float32(math.Inf(-1)), float32(math.Inf(1)), 0, 3}
		if n > 0 {
			floors = append(floors, float32(dots[n/2])*scales[n/2]*scale) // a tie at n/2
		}
		for _, floor := range floors {
			var want []int32
			for i := range dots {
				if float32(dots[i])*scales[i]*scale >= floor {
					want = append(want, int32(i))
				}
			}
			idx := make([]int32, n+16)
			got := idx[:ScaledAbove(dots, scales, scale, floor, idx)]
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d floor %g: %v, want %v", n, floor, got, want)
			}
		}
	}
}

func TestQuantizeAndDotInt8(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 31, 32, 33, 384, 1001} {
		v, q := randomMatrix(r, n), randomMatrix(r, n)
		Normalize(v)
		Normalize(q)
		cv, cq := make([]int8, n), make([]int8, n)
		sv, sq := Quantize(cv, v), Quantize(cq, q)
		var want int32
		var exact float64
		for i := range n {
			want += int32(cv[i]) * int32(cq[i])
			exact += float64(q[i]) * float64(v[i])
		}
		got := DotInt8(cq, cv)
		if got != want {
			t.Errorf("n=%d: DotInt8 = %d, want %d", n, got, want)
		}
		// The quantised product of unit vectors is within 0.02 of the exact one.
		if approx := float64(got) * float64(sv) * float64(sq); math.Abs(approx-exact) > 0.02 {
			t.Errorf("n=%d: quantised dot %g, exact %g", n, approx, exact)
		}
	}
	if s := Quantize(make([]int8, 3), make([]float32, 3)); s != 0 {
		t.Errorf("zero vector scale %g", s)
	}
}

// TestQuantizeSIMD: Quantize gives the plain loop's codes and scale, code
// for code, for every length around the kernel's 16-value steps, for
// products exactly halfway between two codes (rounded away from zero, as
// math.Round does), for vectors holding an infinity or a NaN (left to the
// loop), for zero vectors and vectors so small that 127 over their largest
// value is infinite; and codes shorter than the vector panic before any
// is written.
func TestQuantizeSIMD(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	check := func(name string, v []float32) {
		t.Helper()
		got, want := make([]int8, len(v)), make([]int8, len(v))
		gs, ws := Quantize(got, v), quantizeGo(want, v)
		if math.Float32bits(gs) != math.Float32bits(ws) || !slices.Equal(got, want) {
			t.Fatalf("%s (n=%d): scale %g codes %v, want %g %v", name, len(v), gs, got, ws, want)
		}
	}
	for n := 1; n <= 70; n++ {
		check("random", randomMatrix(r, n))
	}
	check("random", randomMatrix(r, 768))
	halves := make([]float32, 48) // the largest is 127, so each product is the value itself
	for i := range halves {
		halves[i] = float32(i%20) - 9.5
	}
	halves[47] = -127
	check("halves", halves)
	for i := range halves {
		halves[i] = (float32(i%9) + 0.5) * (1 - 2*float32(i%2))
	}
	halves[5] = 127
	check("halves", halves)
	for _, bad := range []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())} {
		for _, at := range []int{0, 15, 31, 40} {
			v := randomMatrix(r, 41)
			v[at] = bad
			got := make([]int8, len(v))
			gs, ws := Quantize(got, v), quantizeGo(make([]int8, len(v)), v)
			if math.Float32bits(gs) != math.Float32bits(ws) {
				t.Fatalf("%g at %d: scale %g, want %g", bad, at, gs, ws)
			}
		}
	}
	check("zero", make([]float32, 48))
	for _, tiny := range []float32{1e-38, 3e-37, 4e-37, 1e-45} { // 127/max overflows below about 3.7e-37
		v := make([]float32, 40)
		v[3], v[20] = tiny, -tiny/2
		check(fmt.Sprint("tiny ", tiny), v)
	}
	short := make([]int8, 48)
	defer func() {
		if recover() == nil {
			t.Fatal("Quantize into codes shorter than the vector did not panic")
		}
		if slices.ContainsFunc(short[16:], func(c int8) bool { return c != 0 }) {
			t.Fatalf("Quantize into 16 codes of 40 values wrote past them: %v", short[16:])
		}
	}()
	Quantize(short[:16], randomMatrix(r, 40))
	t.Fatalf("Quantize into 16 codes of 40 values returned (codes past them: %v)", short[16:])
}

// BenchmarkQuantize is a stored vector of the default models coded for
// the first pass (1,152 values), with AVX-512 and in Go.
func BenchmarkQuantize(b *testing.B) {
	r := rand.New(rand.NewPCG(27, 28))
	v, codes := randomMatrix(r, 1152), make([]int8, 1152)
	b.Run("simd", func(b *testing.B) {
		for b.Loop() {
			Quantize(codes, v)
		}
	})
	b.Run("go", func(b *testing.B) {
		for b.Loop() {
			quantizeGo(codes, v)
		}
	})
}

func BenchmarkDotInt8_384(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	x, y := make([]int8, 384), make([]int8, 384)
	Quantize(x, randomMatrix(r, 384))
	Quantize(y, randomMatrix(r, 384))
	var s int32
	for b.Loop() {
		s += DotInt8(x, y)
	}
	_ = s
}

// BenchmarkDotsInt8 is a first pass's step: one query's 768 codes (the
// gate's two core models) against a block of 256 rows.
func BenchmarkDotsInt8(b *testing.B) {
	r := rand.New(rand.NewPCG(15, 16))
	const n, count = 768, 256
	q, rows := make([]int8, n), make([]int8, n*count)
	Quantize(q, randomMatrix(r, n))
	Quantize(rows, randomMatrix(r, n*count))
	out := make([]int32, count)
	for _, cached := range []bool{false, true} {
		b.Run(fmt.Sprintf("cached=%v", cached), func(b *testing.B) {
			b.SetBytes(n * count)
			for b.Loop() {
				DotsInt8(q, rows, n, out, cached)
			}
		})
	}
}

// BenchmarkDotsInt8Many is a first pass's step for one to five queries
// over a block of rows: DotsInt8Many against DotsInt8 for each query (the
// first from memory, the rest from the cache), over every block of a
// pass of 29,184 rows of 768 codes, larger than the core's cache.
func BenchmarkDotsInt8Many(b *testing.B) {
	r := rand.New(rand.NewPCG(15, 16))
	const n, total, block = 768, 29184, 256
	rows := make([]int8, n*total)
	for i := range rows {
		rows[i] = int8(r.IntN(256) - 128)
	}
	qs, outs := make([][]int8, 5), make([][]int32, 5)
	for j := range qs {
		qs[j], outs[j] = make([]int8, n), make([]int32, block)
		Quantize(qs[j], randomMatrix(r, n))
	}
	for m := 1; m <= len(qs); m++ {
		b.Run(fmt.Sprintf("queries=%d/many", m), func(b *testing.B) {
			for b.Loop() {
				for from := 0; from < total; from += block {
					DotsInt8Many(qs[:m], rows[from*n:(from+block)*n], n, outs[:m])
				}
			}
		})
		b.Run(fmt.Sprintf("queries=%d/each", m), func(b *testing.B) {
			for b.Loop() {
				for from := 0; from < total; from += block {
					for j := range m {
						DotsInt8(qs[j], rows[from*n:(from+block)*n], n, outs[j], j > 0)
					}
				}
			}
		})
	}
}

// TestHalvesToFloats widens every IEEE half value, in vectors of every
// alignment and ragged length, as the scalar definition does.
func TestHalvesToFloats(t *testing.T) {
	src := make([]uint16, 1<<16+37)
	for i := range src {
		src[i] = uint16(i * 40503) // every value, in a scrambled order
	}
	for _, off := range []int{0, 1, 5} {
		for _, n := range []int{0, 1, 15, 16, 17, 1 << 16} {
			in := src[off : off+n]
			got := make([]float32, n)
			halvesToFloats(got, in)
			for i, h := range in {
				want := halfToFloat(h)
				if math.Float32bits(got[i]) != math.Float32bits(want) && !(want != want && got[i] != got[i]) {
					t.Fatalf("offset %d, n %d: half %#04x widened to %g, want %g", off, n, h, got[i], want)
				}
			}
		}
	}
}

// TestMulHalf: a product with half weights widened a panel at a time is
// bit for bit the product with the same weights stored as float32.
func TestMulHalf(t *testing.T) {
	fp := candidates(arithFP32)[0]
	r := rand.New(rand.NewPCG(11, 12))
	for _, s := range [][3]int{{1, 1, 1}, {7, 17, 3}, {20, 1536, 384}, {233, 40, 33}, {25, 80, 9}} {
		m, n, k := s[0], s[1], s[2]
		a := randomMatrix(r, m*k)
		h := make([]uint16, n*k)
		for i := range h {
			h[i] = uint16(r.IntN(0x7c00)) | uint16(r.IntN(2))<<15 // finite halves of either sign
		}
		w := make([]float32, len(h))
		halvesToFloats(w, h)
		bp, bh := make([]float32, packedLen(k, n)), make([]uint16, packedLen(k, n))
		packNT(bp, n, k, w, k)
		packNT(bh, n, k, h, k)
		want, got := make([]float32, m*n), make([]float32, m*n)
		g := gemm{kern: fp.f32, wide: fp.f32Wide}
		g.mul(m, n, k, a, k, bp, want, n)
		g.mulHalf(m, n, k, a, k, bh, got, n)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%dx%dx%d: C[%d] = %g with half weights, %g with float32", m, n, k, i, got[i], want[i])
			}
		}
	}
}

// BenchmarkAttention is one layer's attention over a question's 20
// tokens and an abstract's 230 (bge-small's shape: 12 heads of 32) on
// each kernel set measured for attention.
func BenchmarkAttention(b *testing.B) {
	for _, seq := range []int{20, 230} {
		benchmarkAttention(b, seq)
	}
}

func benchmarkAttention(b *testing.B, seq int) {
	const heads, dh = 12, 32
	h := heads * dh
	r := rand.New(rand.NewPCG(33, 34))
	qkv := randomMatrix(r, seq*3*h)
	ctx := make([]float32, seq*h)
	_, _, attention := measured()
	for _, k := range attention {
		b.Run(fmt.Sprintf("%d/%s", seq, k.name), func(b *testing.B) {
			var p helper
			p.use(&k)
			var qkvb []uint16
			for b.Loop() {
				qkvb = attentionInput(&k, qkv, qkvb)
				for hd := range heads {
					p.attend(qkv, qkvb, hd, dh, h, seq, seq, 0.17, ctx[hd*dh:])
				}
			}
		})
	}
}

// TestDotInt8Extremes: the SIMD product equals the plain one for codes
// anywhere in [-127, 127], the largest magnitudes and zeros included.
func TestDotInt8Extremes(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{32, 64, 1152} {
		for trial := range 50 {
			a, b := make([]int8, n), make([]int8, n)
			for i := range n {
				switch trial % 3 {
				case 0: // extremes and zeros
					a[i], b[i] = []int8{-127, 0, 127}[r.IntN(3)], []int8{-127, 0, 127}[r.IntN(3)]
				default:
					a[i], b[i] = int8(r.IntN(255)-127), int8(r.IntN(255)-127)
				}
			}
			var want int32
			for i := range n {
				want += int32(a[i]) * int32(b[i])
			}
			if got := DotInt8(a, b); got != want {
				t.Fatalf("n=%d trial %d: DotInt8 = %d, want %d", n, trial, got, want)
			}
		}
	}
}

// TestDequantize: every code value at every place of a 32-code step,
// ragged lengths past the SIMD steps, and scales of both signs give Go's
// own scale·float32(int8(c)), bit for bit.
func TestDequantize(t *testing.T) {
	codes := make([]byte, 256+37)
	for i := range codes {
		codes[i] = byte(i * 7)
	}
	for _, scale := range []float32{0.0123, -3.5e-3, 1, 0} {
		for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 40, 255, len(codes)} {
			got := make([]float32, n+1)
			got[n] = 42 // past the end: left alone
			Dequantize(got, codes[:n], scale)
			for i, c := range codes[:n] {
				if want := scale * float32(int8(c)); math.Float32bits(got[i]) != math.Float32bits(want) {
					t.Fatalf("scale %g n %d code %d (%d): %v, want %v", scale, n, i, int8(c), got[i], want)
				}
			}
			if got[n] != 42 {
				t.Fatalf("n %d: wrote past the codes", n)
			}
		}
	}
}

// BenchmarkDequantize is one stored sentence's vector, 1,152 codes.
func BenchmarkDequantize(b *testing.B) {
	codes, dst := make([]byte, 1152), make([]float32, 1152)
	for i := range codes {
		codes[i] = byte(i * 13)
	}
	b.SetBytes(1152)
	for b.Loop() {
		Dequantize(dst, codes, 0.01)
	}
}

// TestDotsInt8: the products of one query with many rows in one call are
// each row's plain sum, for query lengths the SIMD kernel takes and those
// it leaves to the plain loop, rows packed or strided, counts that leave
// the kernel's four-row steps 0 to 3 rows over, and codes at both ends of
// int8 (whose shifted products are the kernel's widest).
func TestDotsInt8(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, n := range []int{64, 128, 384, 768, 767, 1152, 40} {
		for _, stride := range []int{n, n + 64, 1152} {
			if stride < n {
				continue
			}
			for _, count := range []int{1, 2, 3, 4, 5, 7, 37} {
				q, rows := make([]int8, n), make([]int8, (count-1)*stride+n)
				for i := range q {
					q[i] = int8(r.IntN(256) - 128)
				}
				for i := range rows { // stored codes, as Quantize makes them
					rows[i] = int8(r.IntN(255) - 127)
				}
				if count == 7 { // the largest sums either way
					for i := range q {
						q[i] = -128
					}
					for i := range rows {
						rows[i] = int8(-127 + 254*(i/stride%2))
					}
				}
				for _, cached := range []bool{false, true} {
					out := make([]int32, count)
					DotsInt8(q, rows, stride, out, cached)
					for i := range out {
						var want int32
						for j, c := range q {
							want += int32(c) * int32(rows[i*stride+j])
						}
						if out[i] != want {
							t.Fatalf("n=%d stride=%d count=%d cached=%v row %d: %d, want %d", n, stride, count, cached, i, out[i], want)
						}
					}
				}
			}
		}
	}
}

// TestDotsInt8Many: each of one to nine queries' products with many rows
// in one call is each row's plain sum (groups of four, a last group of two
// or three or a lone query made four, a single query left after others),
// for the lengths, strides and counts of TestDotsInt8 (counts that leave
// the kernel's four-row steps 0 to 3 rows over) and codes at both ends of
// int8.
func TestDotsInt8Many(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for _, n := range []int{64, 128, 384, 768, 767, 1152, 40} {
		for _, stride := range []int{n, n + 64, 1152} {
			if stride < n {
				continue
			}
			for _, count := range []int{1, 3, 4, 5, 7, 8, 37} {
				for _, m := range []int{1, 2, 3, 4, 5, 6, 9} {
					qs, outs := make([][]int8, m), make([][]int32, m)
					rows := make([]int8, (count-1)*stride+n)
					for i := range rows { // stored codes, as Quantize makes them
						rows[i] = int8(r.IntN(255) - 127)
					}
					for j := range qs {
						qs[j], outs[j] = make([]int8, n), make([]int32, count)
						for i := range qs[j] {
							qs[j][i] = int8(r.IntN(256) - 128)
						}
					}
					if count == 7 { // the largest sums either way
						for i := range qs[m/2] {
							qs[0][i], qs[m/2][i] = 127, -128
						}
						for i := range rows {
							rows[i] = int8(-127 + 254*(i/stride%2))
						}
					}
					DotsInt8Many(qs, rows, stride, outs)
					for j := range qs {
						for i := range outs[j] {
							var want int32
							for k, c := range qs[j] {
								want += int32(c) * int32(rows[i*stride+k])
							}
							if outs[j][i] != want {
								t.Fatalf("n=%d stride=%d count=%d of %d queries, query %d row %d: %d, want %d", n, stride, count, m, j, i, outs[j][i], want)
							}
						}
					}
				}
			}
		}
	}
}
