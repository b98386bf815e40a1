package topk

import "math"

// Selection keeps the k best of a long stream, as Heap does, for a k
// large enough that keeping a heap costs more than the scores (a first
// pass keeps hundreds of rows of tens of thousands): the items that beat
// the k-th best known so far go to a buffer of 2k, and when it is full the
// k best of it are chosen in linear time (quickselect) and the rest
// dropped, the k-th becoming the new floor. An item costs one comparison
// with the floor, and O(1) more on average if it passes.
type Selection struct {
	k     int
	items []Item
	floor Item
	full  bool // floor is set: k items are known that beat every one dropped
}

// NewSelection is a Selection of the k best.
func NewSelection(k int) *Selection {
	return &Selection{k: k, items: make([]Item, 0, 2*max(k, 0))}
}

// Beats reports whether Push would take an item of this index and score
// now: there is no floor yet, or it beats the floor.
func (s *Selection) Beats(index int, score float32) bool {
	return s.k > 0 && (!s.full || worse(s.floor, Item{index, score}))
}

// Floor is the least score an item may have and still beat the floor
// (Beats decides among the items that reach it): -Inf while there is no
// floor, +Inf when k is not positive.
func (s *Selection) Floor() float32 {
	switch {
	case s.k <= 0:
		return float32(math.Inf(1))
	case !s.full:
		return float32(math.Inf(-1))
	}
	return s.floor.Score
}

// Push offers an item.
func (s *Selection) Push(index int, score float32) {
	if !s.Beats(index, score) {
		return
	}
	s.items = append(s.items, Item{index, score})
	if len(s.items) == 2*s.k {
		s.keep()
	}
}

// keep cuts the buffer to its k best and sets the floor to the worst of
// them.
func (s *Selection) keep() {
	if len(s.items) <= s.k {
		return
	}
	selectBest(s.items, s.k)
	s.items = s.items[:s.k]
	s.floor, s.full = s.items[0], true
	for _, it := range s.items[1:] {
		if worse(it, s.floor) {
			s.floor = it
		}
	}
}

// Items are the k best pushed (fewer if fewer were), in no particular
// order: the Selection's own slice, to read before the next Push.
func (s *Selection) Items() []Item {
	s.keep()
	return s.items
}

// selectBest reorders items so that its first k are the k best (by worse,
// a total order), in no particular order: quickselect, the pivot the
// median of three.
func selectBest(items []Item, k int) {
	lo, hi := 0, len(items)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		// Order lo, mid, hi best first, then partition around mid's item.
		if worse(items[lo], items[mid]) {
			items[lo], items[mid] = items[mid], items[lo]
		}
		if worse(items[lo], items[hi]) {
			items[lo], items[hi] = items[hi], items[lo]
		}
		if worse(items[mid], items[hi]) {
			items[mid], items[hi] = items[hi], items[mid]
		}
		pivot := items[mid]
		i, j := lo, hi
		for i <= j {
			for worse(pivot, items[i]) {
				i++
			}
			for worse(items[j], pivot) {
				j--
			}
			if i <= j {
				items[i], items[j] = items[j], items[i]
				i++
				j--
			}
		}
		// items[lo:j+1] are no worse than the pivot, items[i:hi+1] no better.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
}
