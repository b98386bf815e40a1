package embed

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestToBF16(t *testing.T) {
	for _, c := range []struct {
		in   float32
		want uint16
	}{
		{1, 0x3f80}, {-2, 0xc000}, {0, 0},
		{math.Float32frombits(0x3f808000), 0x3f80}, // a tie rounds to even (down)
		{math.Float32frombits(0x3f818000), 0x3f82}, // a tie rounds to even (up)
		{math.Float32frombits(0x3f808001), 0x3f81}, // above the tie rounds up
	} {
		if got := toBF16(c.in); got != c.want {
			t.Errorf("toBF16(%g) = %#x, want %#x", c.in, got, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 15, 16, 17, 384, 1537} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 10)
		}
		got := make([]uint16, n+1)
		got[n] = 0xbeef
		rowsToBF16(got, x, 1, n, n)
		for i, v := range x {
			if got[i] != toBF16(v) {
				t.Fatalf("n=%d: element %d rounds to %#x, want %#x", n, i, got[i], toBF16(v))
			}
		}
		if n%2 == 0 && got[n] != 0xbeef {
			t.Errorf("n=%d: wrote past the row", n)
		}
	}
}

// TestBF16Kernel checks the bf16 products, with this CPU's kernel, against
// float64 sums of the same bfloat16 values, on shapes with ragged rows,
// columns and an odd k.
func TestBF16Kernel(t *testing.T) {
	kernels := kernelVariants(t, arithBF16, gemmBF16{kern: kernelBF16Go}, []string{"amx-bf16", "avx512-bf16"}, func(k kernels, amx bool) (gemmBF16, bool) {
		return gemmBF16{kern: k.bf16, amx: amx && k.bf16AMX}, !amx || k.bf16AMX
	})
	rng := rand.New(rand.NewPCG(5, 6))
	for name, g := range kernels {
		// The last are whole AMX blocks (16 rows, 64 columns, k a multiple of 32), alone and with ragged rows and columns:
		// blocks in pairs and one alone, the last ragged or not, panels odd and even.
		for x, sh := range [][3]int{{1, 32, 2}, {12, 32, 384}, {13, 40, 3}, {25, 64, 384}, {7, 1536, 1536},
			{16, 64, 32}, {33, 130, 384}, {17, 1152, 384}, {48, 384, 1536}, {16, 64, 33},
			{64, 128, 64}, {70, 128, 384}, {83, 192, 64}, {94, 64, 32}, {19, 96, 64}, {40, 32, 256}, {230, 50, 32}} {
			m, n, k := sh[0], sh[1], sh[2]
			a := make([]float32, m*k)
			w := make([]float32, n*k) // [n, k], as weights are stored
			for i := range a {
				a[i] = float32(rng.NormFloat64())
			}
			for i := range w {
				w[i] = float32(rng.NormFloat64() * 0.05)
			}
			kp := bf16Pairs(k)
			// A with room past its rows to a whole block (as linear
			// allocates it) or without; C with rows past its own that the
			// product must leave alone.
			ab := make([]uint16, m*2*kp, (m+15*(x%2))*2*kp)
			rowsToBF16(ab, a, m, k, k)
			wp := make([]uint16, bf16PackedLen(k, n))
			packBF16NT(wp, n, k, w)
			c := make([]float32, (m+16)*n)
			for i := range c {
				c[i] = -7
			}
			g.mul(m, n, kp, ab, 2*kp, wp, c[:m*n], n)
			for i, v := range c[m*n:] {
				if v != -7 {
					t.Fatalf("%s %dx%dx%d: wrote %g past C's rows, at %d", name, m, n, k, v, i)
				}
			}
			for i := range m {
				for j := range n {
					var want, mag float64
					for p := range k {
						x := float64(fromBF16(toBF16(a[i*k+p]))) * float64(fromBF16(toBF16(w[j*k+p])))
						want += x
						mag += math.Abs(x)
					}
					if d := math.Abs(float64(c[i*n+j]) - want); d > 1e-5*mag+1e-7 {
						t.Fatalf("%s %dx%dx%d: C[%d][%d] = %g, want %g", name, m, n, k, i, j, c[i*n+j], want)
					}
				}
			}
		}
	}
}

// BenchmarkGemmBF16 is BenchmarkGemm's product with bfloat16 operands
// (the activations' conversion included).
func BenchmarkGemmBF16(b *testing.B) {
	kern := kernelBF16Go
	if sets := simdOf(arithBF16); len(sets) > 0 {
		kern = sets[0].bf16
	}
	r := rand.New(rand.NewPCG(5, 6))
	m, n, k := 256, 1536, 384
	a, w := randomMatrix(r, m*k), randomMatrix(r, n*k)
	kp := bf16Pairs(k)
	ab := make([]uint16, m*2*kp)
	wp := make([]uint16, bf16PackedLen(k, n))
	packBF16NT(wp, n, k, w)
	c := make([]float32, m*n)
	g := gemmBF16{kern: kern}
	for b.Loop() {
		rowsToBF16(ab, a, m, k, k)
		g.mul(m, n, kp, ab, 2*kp, wp, c, n)
	}
	b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// TestKernelsAreGenerated: each committed kernel that a generator writes
// (Go's assembler lacking its instructions' mnemonics) is what the
// generator writes now (go generate ./embed after changing one).
func TestKernelsAreGenerated(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to run the generators with:", err)
	}
	for gen, file := range map[string]string{"bf16gen": "gemm_bf16_amd64.s", "amxgen": "gemm_amx_amd64.s"} {
		out := filepath.Join(t.TempDir(), file)
		cmd := exec.Command(goTool, "run", "./internal/"+gen, "-out", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", gen, err, b)
		}
		want, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("embed/%s is not what embed/internal/%s writes: run go generate ./embed", file, gen)
		}
	}
}

// TestPackBF16Strided: packing Bᵀ with a row stride (packBF16Strided,
// rounding with SIMD) equals packing it element by element with toBF16.
func TestPackBF16Strided(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, s := range [][2]int{{1, 1}, {9, 21}, {32, 32}, {70, 33}, {230, 32}, {32, 230}} {
		k, n := s[0], s[1]
		ldb := k + 5
		b := randomMatrix(r, n*ldb)
		want := make([]uint16, bf16PackedLen(k, n))
		for j := range n {
			for p := range k {
				want[(j/bf16PanelWidth*bf16Pairs(k)+p/2)*2*bf16PanelWidth+2*(j%bf16PanelWidth)+p%2] = toBF16(b[j*ldb+p])
			}
		}
		got := make([]uint16, len(want))
		packBF16Strided(got, n, k, b, ldb)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("k=%d n=%d: packed element %d: %#x, want %#x", k, n, i, got[i], want[i])
			}
		}
	}
}
