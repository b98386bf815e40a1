package topk

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHeapKeepsTheBest: whatever the order of the pushes, the k best by
// score (ties: the lower index) are kept and sorted best first.
func TestHeapKeepsTheBest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{0, 1, 5, 50} {
		var all []Item
		for i := range 300 {
			all = append(all, Item{i, float32(rng.IntN(40))}) // many ties
		}
		want := slices.Clone(all)
		slices.SortFunc(want, func(a, b Item) int {
			if a.Score != b.Score {
				if a.Score > b.Score {
					return -1
				}
				return 1
			}
			return a.Index - b.Index
		})
		want = want[:min(k, len(want))]
		for range 3 {
			rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
			h := New(k)
			for _, it := range all {
				h.Push(it.Index, it.Score)
			}
			if got := h.Sorted(); !slices.Equal(got, want) || h.Len() != len(want) {
				t.Fatalf("k %d: %v, want %v", k, got, want)
			}
		}
	}
	h := New(2)
	h.Push(1, 0.5)
	if !h.Holds(1) || h.Holds(2) || !h.Beats(3, 0.1) {
		t.Error("a heap with room")
	}
	h.Push(2, 0.7)
	if h.Beats(3, 0.5) || !h.Beats(0, 0.5) || !h.Beats(3, 0.6) {
		t.Error("a full heap: a tie with the worst is kept only with a lower index")
	}
	h.Reset()
	if h.Len() != 0 {
		t.Error("reset")
	}
}
