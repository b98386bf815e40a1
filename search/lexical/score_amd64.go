package lexical

import "golang.org/x/sys/cpu"

// hasAVX512 reports whether Score's loop runs 16 postings at a time
// (gathers, scatters and compressed stores are AVX-512 Foundation's).
var hasAVX512 = cpu.X86.HasAVX512F

// scoreAVX512 runs Score's loop over n postings of one term, n a positive
// multiple of 16, with AVX-512 (score_amd64.s): norms and scores are
// indexed by row, touched has room for n rows; it returns how many rows it
// appended to touched.
//
//go:noescape
func scoreAVX512(ps *posting, n int, norms *float32, scores *float32, w float32, touched *int32) int

// scoreSIMD runs Score's loop for the term weighing w over the longest
// prefix of ps a multiple of 16 long when the CPU allows, and returns
// touched with the rows it touched appended and the prefix's length.
// Every posting's row is below len(norms) (the index's rows), and scores
// must be as long.
func scoreSIMD(ps []posting, norms, scores []float32, w float32, touched []int32) ([]int32, int) {
	n := len(ps) &^ 15
	if !hasAVX512 || n == 0 || len(scores) < len(norms) {
		return touched, 0
	}
	if cap(touched)-len(touched) < n {
		grown := make([]int32, len(touched), 2*cap(touched)+n)
		copy(grown, touched)
		touched = grown
	}
	room := touched[len(touched) : len(touched)+n]
	k := scoreAVX512(&ps[0], n, &norms[0], &scores[0], w, &room[0])
	return touched[:len(touched)+k], n
}
