//go:build !amd64

package embed

// bestKernel picks the fastest micro-kernel this CPU runs.
func bestKernel() (kernel, string) { return kernelGo, "go" }

// dotSIMD handles nothing here; Dot computes in Go.
func dotSIMD(a, b []float32) (float32, int) { return 0, 0 }

// dotInt8SIMD handles nothing here; DotInt8 computes in Go.
func dotInt8SIMD(a, b []int8) (int32, int) { return 0, 0 }

// softmaxSIMD handles nothing here; softmaxScaled computes in Go.
func softmaxSIMD(row []float32, scale float32) bool { return false }

// geluSIMD handles nothing here; gelu computes in Go.
func geluSIMD(x []float32) bool { return false }

// bestBF16Kernel finds none here: the encoder runs in float32.
func bestBF16Kernel() (bf16Kernel, bool) { return nil, false }

// rowToBF16SIMD handles nothing here; rowsToBF16 converts in Go.
func rowToBF16SIMD(dst []uint16, x []float32) bool { return false }
