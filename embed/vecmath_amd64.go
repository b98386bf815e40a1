package embed

import "golang.org/x/sys/cpu"

// hasAVX512 reports whether this CPU runs the AVX-512 element-wise kernels
// (vecmath_amd64.s). It is set once, from the CPU's features, before main
// runs.
var hasAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL

//go:noescape
func softmaxAVX512(row *float32, n int, scale float32)

//go:noescape
func geluAVX512(x *float32, n int)

// softmaxSIMD computes softmaxScaled with AVX-512 and reports whether it
// did.
func softmaxSIMD(row []float32, scale float32) bool {
	if !hasAVX512 || len(row) == 0 {
		return false
	}
	softmaxAVX512(&row[0], len(row), scale)
	return true
}

// geluSIMD computes gelu with AVX-512 and reports whether it did.
func geluSIMD(x []float32) bool {
	if !hasAVX512 || len(x) == 0 {
		return false
	}
	geluAVX512(&x[0], len(x))
	return true
}
