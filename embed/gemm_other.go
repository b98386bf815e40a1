//go:build !amd64

package embed

// bestKernel picks the fastest micro-kernel this CPU runs.
func bestKernel() (kernel, string) { return kernelGo, "go" }
