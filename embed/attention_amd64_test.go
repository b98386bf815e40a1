package embed

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAttendSmall: a short sequence's attention in one pass
// (attendSmallSIMD) gives the bits of the kernels' products, exponentials
// and scaling on every FMA kernel set, for one to nine query rows (the
// last rows of four repeated), one to attendSmallTokens tokens, whole
// blocks of 16 and ragged ones, a head other than the first, scores far
// apart (exponentials that underflow) and equal; only the head's columns
// of the rows asked for change.
func TestAttendSmall(t *testing.T) {
	if !hasAVX512 {
		t.Skip("no AVX-512: attend multiplies by the kernels")
	}
	const heads, dh = 3, 32
	h := heads * dh
	r := rand.New(rand.NewPCG(41, 42))
	for _, k := range simdOf(arithFP32) {
		for seq := 1; seq <= attendSmallTokens; seq++ {
			for _, rows := range []int{1, 4, 5, 9, seq} {
				if rows > seq {
					continue
				}
				qkv := randomMatrix(r, seq*3*h)
				switch seq % 3 {
				case 1: // scores far apart
					for i := range qkv {
						qkv[i] *= 8
					}
				case 2: // equal keys, equal scores
					for j := 1; j < seq; j++ {
						copy(qkv[j*3*h+h:j*3*h+2*h], qkv[h:2*h])
					}
				}
				var a, b helper
				a.use(&k)
				b.use(&k)
				a.fmaSums = false // the kernels' products
				want, got := make([]float32, (seq+1)*h), make([]float32, (seq+1)*h)
				for i := range want {
					want[i], got[i] = -7, -7
				}
				a.attend(qkv, nil, 1, dh, h, rows, seq, 0.17, want[dh:])
				b.attend(qkv, nil, 1, dh, h, rows, seq, 0.17, got[dh:])
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s, %d tokens, %d rows: ctx[%d] = %v, want %v", k.name, seq, rows, i, got[i], want[i])
					}
					if (i/h >= rows || i%h < dh || i%h >= 2*dh) && got[i] != -7 {
						t.Fatalf("%s, %d tokens, %d rows: ctx[%d] written", k.name, seq, rows, i)
					}
				}
			}
		}
	}
}
