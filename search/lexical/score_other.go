//go:build !amd64

package lexical

// scoreSIMD scores nothing here; Score's loop runs in Go.
func scoreSIMD(ps []posting, norms, scores []float32, w float32, touched []int32) ([]int32, int) {
	return touched, 0
}
