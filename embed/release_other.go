//go:build !linux

package embed

// release is a no-op off Linux: the pages stay until the system needs them.
func release([]byte) {}
