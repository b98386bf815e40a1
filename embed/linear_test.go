package embed

import (
	"fmt"
	"slices"
	"testing"
)

// TestDenseSplitsAgree: a dense product's output is the same bit for bit
// however many parts share its columns (one to nine, as many as a machine
// with that many cores splits it into when it is idle), on every kernel
// set of every arithmetic here, AMX's included: each column goes to the
// same kernel whichever part computes it.
func TestDenseSplitsAgree(t *testing.T) {
	dense, _, _ := measured()
	for _, shape := range [][2]int{{384, 1152}, {384, 1536}, {1536, 384}} {
		in, out := shape[0], shape[1]
		p := newMeasurementProduct(in, out)
		for _, k := range dense {
			t.Run(fmt.Sprintf("%s/%s/%dx%d", k.arith.precision(), k.name, in, out), func(t *testing.T) {
				l := newLinear(p.w, make([]float32, out), out, in, &k)
				var want []float32
				for parts := 1; parts <= 9; parts++ {
					s := &scratch{helpers: make([]helper, parts-1)} // no crew: the parts run one after another
					y := make([]float32, measureRows[0]*out)
					l.mul(s, p.x[:measureRows[0]*in], measureRows[0], y, true)
					if want == nil {
						want = y
					} else if !slices.Equal(y, want) {
						t.Fatalf("%d parts compute other values than one", parts)
					}
				}
			})
		}
	}
}
