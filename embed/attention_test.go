package embed

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestAttendBF16 checks attention with bf16 products, on every bf16
// kernel this CPU has (AMX and not) and the portable one, against its
// definition in float64 over the same rounded values: queries, keys and
// values in bf16, the probabilities (float32 exponentials over their
// float32 sum) rounded to bf16. Sequences from one token to past whole AMX blocks, one query
// row (the last layer's first token) or all, heads of 32 and 64, and a
// head other than the first: only that head's columns of ctx change.
func TestAttendBF16(t *testing.T) {
	variants := kernelVariants(t, arithBF16, gemmBF16{kern: kernelBF16Go}, []string{"amx-bf16", "avx512-bf16"}, func(k kernels, amx bool) (gemmBF16, bool) {
		return gemmBF16{kern: k.bf16, amx: amx && k.bf16AMX}, !amx || k.bf16AMX
	})
	r := rand.New(rand.NewPCG(7, 8))
	const heads, hd, scale = 3, 1, 0.17
	bf16Set := kernels{arith: arithBF16, bf16: kernelBF16Go} // attentionInput's rounding
	for name, g := range variants {
		p := helper{gb: g} // reused across shapes, as an encoder's helper is
		for _, dh := range []int{32, 64} {
			h := heads * dh
			for _, seq := range []int{1, 10, 16, 17, 64, 65, 230} {
				for _, rows := range []int{seq, 1} {
					t.Run(fmt.Sprintf("%s/dh%d/seq%d/rows%d", name, dh, seq, rows), func(t *testing.T) {
						qkv := randomMatrix(r, seq*3*h)
						for i := range qkv {
							qkv[i] *= 2 // scores of a few units, as a trained model's
						}
						ctx := randomMatrix(r, rows*h)
						before := append([]float32(nil), ctx...)
						p.attendBF16(attentionInput(&bf16Set, qkv, nil), hd, dh, h, rows, seq, scale, ctx[hd*dh:])
						want, slack := attendBF16Definition(qkv, hd, dh, h, rows, seq, scale)
						for i := range rows {
							for j := range h {
								got := ctx[i*h+j]
								if j/dh != hd {
									if got != before[i*h+j] {
										t.Fatalf("row %d column %d (another head's) changed", i, j)
									}
									continue
								}
								if w, e := want[i*dh+j-hd*dh], slack[i*dh+j-hd*dh]; math.Abs(float64(got)-w) > 1e-5+1e-5*math.Abs(w)+e {
									t.Fatalf("row %d column %d: %g, want %g", i, j-hd*dh, got, w)
								}
							}
						}
					})
				}
			}
		}
	}
}

// attendBF16Definition is attendBF16 by its definition, in float64, and
// for each value the most that the exponentials' rounding to bf16 may
// move it where the float32 ones differ from math.Exp's in their last
// bits: one bf16 step (at most 2⁻⁷ of each) flipped.
func attendBF16Definition(qkv []float32, hd, dh, h, rows, seq int, scale float64) (out, slack []float64) {
	bf := func(x float32) float64 { return float64(fromBF16(toBF16(x))) }
	out, slack = make([]float64, rows*dh), make([]float64, rows*dh)
	for i := range rows {
		scores := make([]float64, seq)
		maxv := math.Inf(-1)
		for j := range seq {
			for d := range dh {
				// float32 sums of float32 products: their order does not matter at this tolerance
				scores[j] += bf(qkv[i*3*h+hd*dh+d]) * bf(qkv[j*3*h+h+hd*dh+d])
			}
			maxv = max(maxv, float64(float32(scores[j])))
		}
		var sum float64
		for j, s := range scores {
			scores[j] = math.Exp(scale * (float64(float32(s)) - maxv))
			sum += scores[j]
		}
		for j, e := range scores {
			p := e / sum
			for d := range dh {
				v := bf(qkv[j*3*h+2*h+hd*dh+d])
				out[i*dh+d] += bf(float32(e)) * v / sum // rounded before the division
				slack[i*dh+d] += p / 128 * math.Abs(v)
			}
		}
	}
	return out, slack
}

// TestAttendBF16NearFloat32: with this CPU's kernels, the bf16 attention
// of an abstract's length stays within bf16's rounding of the float32
// one (each row's cosine).
func TestAttendBF16NearFloat32(t *testing.T) {
	sets := simdOf(arithBF16)
	if len(sets) == 0 {
		sets = []kernels{{arith: arithBF16, name: "go", bf16: kernelBF16Go}}
	}
	fp, _ := portableKernels(arithFP32)
	const seq, heads, dh = 230, 12, 32
	h := heads * dh
	r := rand.New(rand.NewPCG(9, 10))
	qkv := randomMatrix(r, seq*3*h)
	var want helper
	want.use(&fp)
	exact := make([]float32, seq*h)
	for hd := range heads {
		want.attend(qkv, nil, hd, dh, h, seq, seq, 0.17, exact[hd*dh:])
	}
	for _, k := range sets {
		var p helper
		p.use(&k)
		got := make([]float32, seq*h)
		qkvb := attentionInput(&k, qkv, nil)
		for hd := range heads {
			p.attend(qkv, qkvb, hd, dh, h, seq, seq, 0.17, got[hd*dh:])
		}
		worst := 1.0
		for i := range seq * heads {
			worst = min(worst, cosine(got[i*dh:(i+1)*dh], exact[i*dh:(i+1)*dh]))
		}
		t.Logf("%s: lowest cosine of a head's row to float32 %.6f", k.name, worst)
		if worst < 0.999 {
			t.Errorf("%s: a head's row has cosine %.6f to float32's", k.name, worst)
		}
	}
}

// TestAttendShortInFloat32: a sequence shorter than attendBF16Tokens
// attends in float32 on a bf16 kernel set, bit for bit as on the float32
// set its float32 kernels are.
func TestAttendShortInFloat32(t *testing.T) {
	fp := candidates(arithFP32)[0]
	const heads, dh = 12, 32
	h := heads * dh
	r := rand.New(rand.NewPCG(13, 14))
	for _, k := range simdOf(arithBF16) {
		for _, seq := range []int{1, 16, attendBF16Tokens - 1} {
			qkv := randomMatrix(r, seq*3*h)
			var a, b helper
			a.use(&fp)
			b.use(&k)
			want, got := make([]float32, seq*h), make([]float32, seq*h)
			qkvb := attentionInput(&k, qkv, nil)
			for hd := range heads {
				a.attend(qkv, nil, hd, dh, h, seq, seq, 0.17, want[hd*dh:])
				b.attend(qkv, qkvb, hd, dh, h, seq, seq, 0.17, got[hd*dh:])
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s, %d tokens: not float32's attention", k.name, seq)
			}
		}
	}
}

// TestPackBF16KeysAndValues: each key's values land in their token's
// column, pair by pair, and each value in its dimension's column, the
// pair of its two tokens; what lies past the tokens and columns is zero.
func TestPackBF16KeysAndValues(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	// seq tokens, n values a token, kp pairs of tokens (values) and kk
	// pairs of values (keys); heads of 32 (kk 16) take the SIMD paths
	for _, sh := range [][4]int{{1, 32, 16, 16}, {7, 32, 16, 16}, {230, 32, 128, 16}, {16, 32, 8, 16}, {47, 40, 24, 16},
		{100, 34, 50, 16}, {9, 64, 8, 32}, {64, 70, 32, 32}, {3, 100, 2, 2}} {
		seq, n, kp, kk := sh[0], sh[1], sh[2], sh[3]
		ld := n + 4 - n%2 // rows wider than n, at even places as in qkv
		b := make([]uint16, seq*ld)
		for i := range b {
			b[i] = uint16(r.Uint32())
		}
		at := func(dst []uint16, kp, pn, p, c, e int) uint16 {
			return dst[pn*2*kp*bf16PanelWidth+p*2*bf16PanelWidth+2*c+e]
		}
		garbage := func(n int) []uint16 {
			d := make([]uint16, n)
			for i := range d {
				d[i] = 0xbeef // garbage that must be overwritten
			}
			return d
		}
		// values: B [seq, n], kp pairs of tokens
		dst := garbage(bf16PackedLen(2*kp, n))
		packBF16Values(dst, kp, seq, n, b, ld)
		for pn := range len(dst) / (2 * kp * bf16PanelWidth) {
			for p := range kp {
				for c := range bf16PanelWidth {
					for e := range 2 {
						tok, col := 2*p+e, pn*bf16PanelWidth+c
						var want uint16
						if tok < seq && col < n {
							want = b[tok*ld+col]
						}
						if got := at(dst, kp, pn, p, c, e); got != want {
							t.Fatalf("values %dx%d kp %d: token %d dimension %d packed as %#x, want %#x", seq, n, kp, tok, col, got, want)
						}
					}
				}
			}
		}
		// keys: seq keys of 2·kk values (n ≥ 2·kk where this is run), B = keysᵀ
		if n < 2*kk {
			continue
		}
		dst = garbage(bf16PackedLen(2*kk, seq))
		packBF16Keys(dst, kk, seq, b, ld)
		for pn := range len(dst) / (2 * kk * bf16PanelWidth) {
			for p := range kk {
				for c := range bf16PanelWidth {
					for e := range 2 {
						tok := pn*bf16PanelWidth + c
						var want uint16
						if tok < seq {
							want = b[tok*ld+2*p+e]
						}
						if got := at(dst, kk, pn, p, c, e); got != want {
							t.Fatalf("keys %d of %d: token %d value %d packed as %#x, want %#x", seq, 2*kk, tok, 2*p+e, got, want)
						}
					}
				}
			}
		}
	}
}

// cosine is a and b's cosine, in float64.
func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

// TestPackFloatKeys: float32 keys packed 16 tokens by 16 values at a time
// (packFloatKeysSIMD, where the CPU has it) are packNT's panels exactly,
// for whole and ragged groups of tokens and heads of 32 and 64.
func TestPackFloatKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, seq := range []int{1, 2, 15, 16, 17, 33, 230} {
		for _, dh := range []int{32, 64} {
			ld := 3*dh + 5 // rows wider than a head, at odd places
			k := randomMatrix(r, seq*ld)
			want := make([]float32, packedLen(dh, seq))
			packNT(want, seq, dh, k, ld)
			got := randomMatrix(r, len(want)) // garbage that must be overwritten
			if !packFloatKeysSIMD(got, seq, dh, k, ld) {
				t.Skip("this CPU packs float32 keys with packNT alone")
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%d tokens, heads of %d: panel %d row %d column %d is %g, want %g",
						seq, dh, i/(dh*panelWidth), i%(dh*panelWidth)/panelWidth, i%panelWidth, got[i], want[i])
				}
			}
		}
	}
}
