//go:build amd64 && !linux

package embed

// amxPermitted reports false: only Linux's permission request is known
// here.
func amxPermitted() bool { return false }
