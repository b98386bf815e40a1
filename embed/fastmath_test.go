package embed

import (
	"math"
	"testing"
)

func TestFastMath(t *testing.T) {
	var maxExp, maxErf float64
	for x64 := -30.0; x64 <= 30; x64 += 0.001 {
		x := float64(float32(x64)) // the functions see float32 inputs
		want := math.Exp(x)
		if rel := math.Abs(float64(expf(float32(x)))-want) / want; rel > maxExp {
			maxExp = rel
		}
		if d := math.Abs(float64(erff(float32(x))) - math.Erf(x)); d > maxErf {
			maxErf = d
		}
	}
	if maxExp > 3e-6 || maxErf > 5e-7 {
		t.Errorf("max relative error of expf %.3g (want <= 3e-6), max absolute error of erff %.3g (want <= 5e-7)", maxExp, maxErf)
	}
	t.Logf("expf max relative error %.3g, erff max absolute error %.3g", maxExp, maxErf)
	if expf(-100) != 0 || !math.IsInf(float64(expf(100)), 1) {
		t.Error("expf out of range")
	}
}
