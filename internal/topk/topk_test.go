package topk

import (
	"math"
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

// TestSelectionKeepsTheBest: a Selection keeps the same items as a Heap,
// for streams in random, best-first and worst-first order (the last makes
// every item pass the floor), with many ties, and k from 0 to past the
// stream's length.
func TestSelectionKeepsTheBest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, k := range []int{0, 1, 2, 7, 50, 299, 300, 400} {
		for _, ties := range []int{3, 40, 1 << 20} {
			var all []Item
			for i := range 300 {
				all = append(all, Item{i, float32(rng.IntN(ties))})
			}
			h := New(k)
			for _, it := range all {
				h.Push(it.Index, it.Score)
			}
			want := h.Sorted()
			every := New(len(all))
			for _, it := range all {
				every.Push(it.Index, it.Score)
			}
			for order := range 3 {
				switch order {
				case 0:
					rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
				case 1:
					all = every.Sorted()
				case 2:
					all = every.Sorted()
					slices.Reverse(all)
				}
				s := NewSelection(k)
				for _, it := range all {
					s.Push(it.Index, it.Score)
				}
				got := slices.Clone(s.Items())
				slices.SortFunc(got, func(a, b Item) int {
					if worse(b, a) {
						return -1
					}
					return 1
				})
				if !slices.Equal(got, want) {
					t.Fatalf("k %d ties %d order %d: %v, want %v", k, ties, order, got, want)
				}
			}
		}
	}
	s := NewSelection(1)
	s.Push(1, 0.5)
	s.Push(2, 0.7)
	if s.Beats(3, 0.6) || !s.Beats(3, 0.8) || !s.Beats(1, 0.7) || s.Beats(3, 0.7) || len(s.Items()) != 1 || s.Items()[0].Index != 2 {
		t.Error("after its first choice a Selection takes only what beats the k-th")
	}
}

// TestSelectionFloor: no floor (-Inf) until k items are known to beat
// every one dropped, then the k-th best's score, which no item that Beats
// takes falls under; +Inf when k is not positive.
func TestSelectionFloor(t *testing.T) {
	if f := NewSelection(0).Floor(); !math.IsInf(float64(f), 1) {
		t.Fatalf("k = 0: floor %g, want +Inf", f)
	}
	s := NewSelection(3)
	for i := range 5 { // the buffer holds 2k before it chooses
		if f := s.Floor(); !math.IsInf(float64(f), -1) {
			t.Fatalf("after %d items: floor %g, want -Inf", i, f)
		}
		s.Push(i, float32(i))
	}
	s.Push(5, 5)
	if f := s.Floor(); f != 3 {
		t.Fatalf("the 3 best of 0..5: floor %g, want 3", f)
	}
	for i, score := range []float32{2.5, 3, 4} {
		if beats := s.Beats(10+i, score); beats && score < s.Floor() {
			t.Fatalf("%g beats, under the floor %g", score, s.Floor())
		}
	}
}
