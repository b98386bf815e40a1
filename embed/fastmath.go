package embed

import "math"

// Float32 approximations of exp and erf for the encoder's softmax and GELU,
// where math.Exp and math.Erf (float64) took over half the time. Their
// errors (relative 2e-6 for exp over [-30, 30], from rounding x·log2 e to
// float32; absolute 4e-7 for erf) are near float32 rounding of the values
// they feed; the reference-vector test bounds the
// result.

// expf returns e^x for x ≤ 88.7; below -87 it returns 0.
func expf(x float32) float32 {
	if x < -87 {
		return 0
	}
	if x > 88.7 {
		return float32(math.Inf(1))
	}
	// e^x = 2^(x·log2 e) = 2^n · 2^f, n integer, f in [-0.5, 0.5].
	t := x * 1.4426950408889634
	n := float32(math.Floor(float64(t + 0.5)))
	f := t - n
	// 2^f by its Taylor polynomial in f·ln 2, degree 6.
	const (
		c1 = 0.6931471805599453
		c2 = 0.2402265069591007
		c3 = 0.05550410866482158
		c4 = 0.009618129107628477
		c5 = 0.0013333558146428443
		c6 = 0.00015403530393381606
	)
	p := 1 + f*(c1+f*(c2+f*(c3+f*(c4+f*(c5+f*c6)))))
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// erff is the error function (Abramowitz and Stegun 7.1.26).
func erff(x float32) float32 {
	const (
		p  = 0.3275911
		a1 = 0.254829592
		a2 = -0.284496736
		a3 = 1.421413741
		a4 = -1.453152027
		a5 = 1.061405429
	)
	ax := x
	if ax < 0 {
		ax = -ax
	}
	t := 1 / (1 + p*ax)
	y := 1 - (((((a5*t+a4)*t)+a3)*t+a2)*t+a1)*t*expf(-ax*ax)
	if x < 0 {
		return -y
	}
	return y
}
