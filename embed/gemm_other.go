//go:build !amd64

package embed

// bestKernel picks the fastest micro-kernel this CPU runs.
func bestKernel() (kernel, wideKernel[float32], string) { return kernelGo, wideKernel[float32]{}, "go" }

// dotSIMD handles nothing here; Dot computes in Go.
func dotSIMD(a, b []float32) (float32, int) { return 0, 0 }

// dotInt8SIMD handles nothing here; DotInt8 computes in Go.
func dotInt8SIMD(a, b []int8) (int32, int) { return 0, 0 }

// softmaxSIMD handles nothing here; softmaxScaled computes in Go.
func softmaxSIMD(row []float32, scale float32) bool { return false }

// biasGELUSIMD handles nothing here; biasGELU computes in Go.
func biasGELUSIMD(x, b []float32) bool { return false }

// addSIMD handles nothing here; add computes in Go.
func addSIMD(dst, src []float32) bool { return false }

// residualNormSIMD handles nothing here; layerNorm.residual computes in Go.
func residualNormSIMD(x, y, b, gamma, beta []float32, eps float32) bool { return false }

// bf16KernelName names no kernel here.
const bf16KernelName = ""

// bestBF16Kernel finds none here: the encoder runs in float32.
func bestBF16Kernel() (bf16Kernel, bool) { return nil, false }

// rowToBF16SIMD handles nothing here; rowsToBF16 converts in Go.
func rowToBF16SIMD(dst []uint16, x []float32) bool { return false }

// halvesSIMD handles nothing here; halvesToFloats widens in Go.
func halvesSIMD(dst []float32, src []uint16) int { return 0 }

// bestInt8Kernels finds none here; the portable kernel serves int8.
func bestInt8Kernels() (int8Kernel, wideKernel[byte], string, bool) {
	return nil, wideKernel[byte]{}, "", false
}

// quantizeSIMD handles nothing here; quantizeRow computes in Go.
func quantizeSIMD(dst []byte, x []float32, inv, zf float32) int { return 0 }

// minMaxSIMD handles nothing here; minMax computes in Go.
func minMaxSIMD(x []float32) (float32, float32, int) { return 0, 0, 0 }

// absMaxSIMD handles nothing here; absMax computes in Go.
func absMaxSIMD(peak, x []float32) int { return 0 }
