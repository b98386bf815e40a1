package embed

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// int8Kernels are the int8 micro-kernels this build and CPU have, by
// name: the portable one, and each SIMD set the CPU runs, a set with a
// wide kernel also without it.
func int8Kernels(t testing.TB) map[string]gemmInt8 {
	return kernelVariants(t, arithInt8, gemmInt8{kern: kernelInt8Go}, []string{"amx-int8", "avx512-vnni"}, func(k kernels, wide bool) (gemmInt8, bool) {
		if wide {
			return gemmInt8{kern: k.int8, wide: k.int8Wide, amx: k.int8AMX}, k.int8Wide.kern != nil
		}
		return gemmInt8{kern: k.int8}, true
	})
}

// TestQuantizeRow: the SIMD quantisation equals the scalar definition
// code for code, and the codes reconstruct the row within half a step.
func TestQuantizeRow(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	// Lengths with and without the SIMD steps' tails (8, 16, 32).
	for _, k := range []int{1, 3, 7, 8, 9, 16, 17, 31, 32, 33, 48, 100, 384, 1536} {
		for _, shift := range []float32{0, 3, -3} { // rows of both signs, and all positive or negative
			x := randomMatrix(r, k)
			for i := range x {
				x[i] += shift
			}
			got := make([]byte, int8RowLen(k))
			quantizeRow(got, x)
			lo, hi := x[0], x[0]
			for _, v := range x {
				lo, hi = min(lo, v), max(hi, v)
			}
			lo, hi = min(lo, 0), max(hi, 0)
			inv := 255 / (hi - lo)
			zf := float32(math.RoundToEven(float64(-lo * inv)))
			step := (hi - lo) / 255
			codes := got[:4*int8Quads(k)]
			for i, v := range x {
				if want := quantize(v, inv, zf); codes[i] != want {
					t.Fatalf("k=%d: code %d of %g is %d, want %d", k, i, v, codes[i], want)
				}
				if back := step * (float32(codes[i]) - zf); math.Abs(float64(back-v)) > 0.51*float64(step) {
					t.Fatalf("k=%d: %g quantised to %d reads back %g", k, v, codes[i], back)
				}
			}
			for i := k; i < len(codes); i++ {
				if codes[i] != 0 {
					t.Fatalf("k=%d: pad code %d is %d", k, i, codes[i])
				}
			}
		}
	}
	zero := make([]byte, int8RowLen(5))
	quantizeRow(zero, make([]float32, 5)) // a row of zeros: scale 0, no division by it
	for i, b := range zero {
		if b != 0 {
			t.Fatalf("row of zeros: byte %d is %d", i, b)
		}
	}
}

// TestGemmInt8Kernels: every int8 kernel gives, bit for bit, the portable
// kernel's products, on ragged shapes and strides, and those are within
// the quantisation's error of the float definition.
func TestGemmInt8Kernels(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	shapes := [][3]int{{1, 1, 1}, {6, 16, 4}, {7, 17, 3}, {5, 15, 33}, {13, 40, 31}, {64, 384, 384}, {20, 48, 1536},
		{6, 64, 1}, {7, 65, 5}, {13, 130, 37}, {11, 200, 1536}, {3, 64, 384},
		// Whole AMX blocks (16 rows, 64 columns, k a multiple of 64), alone and with ragged rows and columns.
		{16, 64, 64}, {32, 128, 384}, {17, 1152, 384}, {48, 384, 1536}, {33, 100, 128}, {16, 64, 65}, {250, 192, 64}}
	for kname, g := range int8Kernels(t) {
		for _, s := range shapes {
			m, n, k := s[0], s[1], s[2]
			t.Run(fmt.Sprintf("%s/%dx%dx%d", kname, m, n, k), func(t *testing.T) {
				lda, ldc := k+3, n+5
				a, b := randomMatrix(r, m*lda), randomMatrix(r, n*k)
				aq := make([]byte, m*int8RowLen(k))
				quantizeRows(aq, a, m, k, lda)
				bp := make([]byte, int8PackedLen(k, n))
				packInt8NT(bp, n, k, b)
				// C's rows, then rows past them that nothing may write.
				cAll := randomMatrix(r, (m+16)*ldc)
				c := cAll[:m*ldc]
				before := append([]float32(nil), cAll...)
				g.mul(m, n, k, aq, int8RowLen(k), bp, c, ldc)
				for i := m * ldc; i < len(cAll); i++ {
					if cAll[i] != before[i] {
						t.Fatalf("C's memory past its %d rows was written at row %d", m, i/ldc)
					}
				}
				// A whose buffer has room to a whole block past its rows,
				// holding garbage there: the same products.
				roomy := make([]byte, (m+16)*int8RowLen(k))
				for i := range roomy {
					roomy[i] = byte(r.Uint32())
				}
				copy(roomy, aq)
				c2 := make([]float32, m*ldc)
				g.mul(m, n, k, roomy[:len(aq)], int8RowLen(k), bp, c2, ldc)
				for i := range m {
					for j := range n {
						if math.Float32bits(c2[i*ldc+j]) != math.Float32bits(c[i*ldc+j]) {
							t.Fatalf("A with room past its rows: C[%d][%d] = %g, else %g", i, j, c2[i*ldc+j], c[i*ldc+j])
						}
					}
				}
				ref := make([]float32, m*n)
				(&gemmInt8{kern: kernelInt8Go}).mul(m, n, k, aq, int8RowLen(k), bp, ref, n)
				want := naiveNT(m, n, k, a, lda, b, k)
				for i := range m {
					// The error bound: each input off by at most half its step,
					// each weight by half its step, summed over k.
					var amax float64
					for _, v := range a[i*lda : i*lda+k] {
						amax = max(amax, math.Abs(float64(v)))
					}
					for j := range n {
						got := c[i*ldc+j]
						if math.Float32bits(got) != math.Float32bits(ref[i*n+j]) {
							t.Fatalf("C[%d][%d] = %g, the portable kernel's %g", i, j, got, ref[i*n+j])
						}
						var wmax float64
						for _, v := range b[j*k : (j+1)*k] {
							wmax = max(wmax, math.Abs(float64(v)))
						}
						bound := float64(k) * (amax*wmax/int8WeightMax + 2*amax/255*wmax) / 2
						if d := math.Abs(float64(got) - want[i*n+j]); d > bound {
							t.Fatalf("C[%d][%d] = %g, want %g within %g", i, j, got, want[i*n+j], bound)
						}
					}
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

// BenchmarkGemmInt8 is BenchmarkGemm's product in int8, its inputs'
// quantisation included.
func BenchmarkGemmInt8(b *testing.B) {
	for name, g := range int8Kernels(b) {
		b.Run(name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(5, 6))
			m, n, k := 256, 1536, 384
			a, w := randomMatrix(r, m*k), randomMatrix(r, n*k)
			bp := make([]byte, int8PackedLen(k, n))
			packInt8NT(bp, n, k, w)
			aq := make([]byte, m*int8RowLen(k))
			c := make([]float32, m*n)
			for b.Loop() {
				quantizeRows(aq, a, m, k, k)
				g.mul(m, n, k, aq, int8RowLen(k), bp, c, n)
			}
			b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GOP/s")
		})
	}
}

// TestOutliers: the channels far above the others are found, in channel
// order, the maxOutliers largest when there are more, appended to what
// dst holds; normal rows have none.
func TestOutliers(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	const m, k = 5, 384
	x := randomMatrix(r, m*k)
	peak := make([]float32, k)
	if got := outliers(nil, peak, x, m, k); len(got) != 0 {
		t.Errorf("normal rows: outliers %v, want none", got)
	}
	big := map[int]float32{7: 40, 99: 90, 300: 60}
	for j, v := range big {
		x[2*k+j] = -v // one row, either sign
	}
	got := outliers(nil, peak, x, m, k)
	if fmt.Sprint(got) != fmt.Sprint([]int{7, 99, 300}) {
		t.Errorf("outliers %v, want [7 99 300]", got)
	}
	for j := range 20 {
		x[k+10+j] = float32(100 + j)
	}
	// Appended after the channels dst holds (another sequence's), the
	// maxOutliers largest of x's own.
	got = outliers([]int{3, 5}, peak, x, m, k)
	if got[0] != 3 || got[1] != 5 {
		t.Fatalf("outliers %v: dst's channels not kept first", got)
	}
	got = got[2:]
	if len(got) != maxOutliers {
		t.Fatalf("outliers %v: %d, want at most %d", got, len(got), maxOutliers)
	}
	for _, j := range got {
		if j < 10+20-maxOutliers || j >= 30 {
			t.Errorf("outliers %v: channel %d is not among the %d largest", got, j, maxOutliers)
		}
	}
}

// TestAbsMax: the columns' largest magnitudes over rows, with SIMD where
// the CPU has it, are the definition's exactly, at widths with and
// without the SIMD steps' tails.
func TestAbsMax(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	for _, k := range []int{1, 7, 8, 15, 16, 17, 63, 64, 65, 100, 384, 1536} {
		for _, m := range []int{1, 2, 5, 18} {
			x := randomMatrix(r, m*k)
			peak := randomMatrix(r, k) // what peak held before is kept where larger
			for i := range peak {
				peak[i] = float32(math.Abs(float64(peak[i]))) / 2
			}
			want := slices.Clone(peak)
			for row := range m {
				for i, v := range x[row*k : (row+1)*k] {
					want[i] = max(want[i], float32(math.Abs(float64(v))))
				}
			}
			absMax(peak, x, m, k)
			if !slices.Equal(peak, want) {
				t.Fatalf("%d rows of %d: %v, want %v", m, k, peak, want)
			}
		}
	}
}

// TestOutlierProduct: the outlier channels' share added in one pass
// (outlierProductSIMD, where the CPU has it) is, bit for bit, the float32
// kernels' product added to y, and leaves y's other columns as they were.
func TestOutlierProduct(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	var g gemm
	for _, k := range simdOf(arithInt8) {
		if k.fusedOutliers {
			g.kern, g.wide = k.f32, k.f32Wide
			break
		}
	}
	if g.kern == nil {
		t.Skip("no int8 kernel set here adds its outliers in one pass")
	}
	for _, sh := range [][3]int{{1, 1, 1}, {1, 16, 8}, {3, 15, 2}, {5, 17, 8}, {18, 384, 3}, {7, 1152, 8}, {2, 40, 5}} {
		rows, n, c := sh[0], sh[1], sh[2]
		const ldy = 1200
		a, w := randomMatrix(r, rows*c), randomMatrix(r, n*c) // w as [n, c], as packNT takes it
		wp := make([]float32, packedLen(c, n))
		packNT(wp, n, c, w, c)
		y := randomMatrix(r, rows*ldy)
		want := slices.Clone(y)
		prod := make([]float32, rows*n)
		g.mul(rows, n, c, a, c, wp, prod, n)
		for row := range rows {
			add(want[row*ldy:row*ldy+n], prod[row*n:(row+1)*n])
		}
		if !outlierProductSIMD(y, ldy, a, c, wp, n, rows) {
			t.Fatal("outlierProductSIMD did nothing on a CPU whose set fuses outliers")
		}
		for i := range y {
			if math.Float32bits(y[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%v: y[%d] (row %d, column %d) is %g, want %g", sh, i, i/ldy, i%ldy, y[i], want[i])
			}
		}
	}
}

// TestInt8Columns: the weights read back for a few input channels are the
// weights packed, within half a quantisation step of their column.
func TestInt8Columns(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	const n, k = 37, 21
	w := randomMatrix(r, n*k)
	bp := make([]byte, int8PackedLen(k, n))
	packInt8NT(bp, n, k, w)
	chans := []int{0, 2, 5, 7, 20} // every byte of a quad
	c := len(chans)
	got := make([]float32, packedLen(c, n))
	for i := range got {
		got[i] = float32(math.NaN()) // every element must be written
	}
	packInt8Columns(got, bp, k, n, chans)
	for o := range packedLen(c, n) / c {
		var peak float64
		if o < n {
			for _, v := range w[o*k : (o+1)*k] {
				peak = max(peak, math.Abs(float64(v)))
			}
		}
		for i, ch := range chans {
			v := got[(o/panelWidth*c+i)*panelWidth+o%panelWidth]
			want := float32(0)
			if o < n {
				want = w[o*k+ch]
			}
			if d := math.Abs(float64(v - want)); !(d <= 0.5*peak/int8WeightMax*1.0001) {
				t.Errorf("column %d, channel %d: %g, packed %g", o, ch, v, want)
			}
			// The code times its column's scale, one rounding: the SIMD
			// panels and the Go tail alike.
			panel := bp[o/panelWidth*int8PanelLen(k):]
			code := int8(panel[(ch/4)*64+4*(o%panelWidth)+ch%4])
			scale := math.Float32frombits(binary.LittleEndian.Uint32(panel[64*int8Quads(k)+4*panelWidth+4*(o%panelWidth):]))
			if exact := float32(code) * scale; v != exact {
				t.Errorf("column %d, channel %d: %g, want code %d times scale %g, %g", o, ch, v, code, scale, exact)
			}
		}
	}
}

// TestEmptyProducts: a product over k = 0 clears its m×n of C in every
// arithmetic, and one with no rows or columns touches nothing.
func TestEmptyProducts(t *testing.T) {
	for name, mul := range map[string]func(m, n int, c []float32){
		"fp32": func(m, n int, c []float32) { (&gemm{}).mul(m, n, 0, nil, 0, nil, c, 5) },
		"half": func(m, n int, c []float32) { (&gemm{}).mulHalf(m, n, 0, nil, 0, nil, c, 5) },
		"bf16": func(m, n int, c []float32) { (&gemmBF16{}).mul(m, n, 0, nil, 0, nil, c, 5) },
		"int8": func(m, n int, c []float32) { (&gemmInt8{}).mul(m, n, 0, nil, 0, nil, c, 5) },
	} {
		c := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
		mul(2, 3, c)
		if fmt.Sprint(c) != "[0 0 0 4 5 0 0 0 9 10]" {
			t.Errorf("%s: k = 0 left C %v", name, c)
		}
		mul(0, 3, c)
		mul(2, 0, c)
		if fmt.Sprint(c) != "[0 0 0 4 5 0 0 0 9 10]" {
			t.Errorf("%s: an empty product changed C to %v", name, c)
		}
	}
}

// BenchmarkGemmInt8Query is a short query's product (17 tokens through
// the 384→1536 feed-forward layer) with the weights of 24 such layers in
// turn, as a query meets them: 14 MB of int8 weights, more than a core's
// L2 cache holds, so each layer's are read from L3 or memory.
func BenchmarkGemmInt8Query(b *testing.B) {
	for name, g := range int8Kernels(b) {
		if name == "go" {
			continue
		}
		b.Run(name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(5, 6))
			const layers = 24
			m, n, k := 17, 1536, 384
			a := randomMatrix(r, m*k)
			w := randomMatrix(r, n*k)
			bps := make([][]byte, layers)
			for i := range bps {
				bps[i] = make([]byte, int8PackedLen(k, n))
				packInt8NT(bps[i], n, k, w)
			}
			aq := make([]byte, m*int8RowLen(k))
			c := make([]float32, m*n)
			quantizeRows(aq, a, m, k, k)
			for i := 0; b.Loop(); i++ {
				g.mul(m, n, k, aq, int8RowLen(k), bps[i%layers], c, n)
			}
			b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GOP/s")
		})
	}
}
