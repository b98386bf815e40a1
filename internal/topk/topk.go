// Package topk keeps the k best of a stream of scored indices (rows of an
// index, points of a map) in a min-heap kept by hand, so that choosing
// from n costs O(n log k) and pushing allocates nothing.
package topk

import "slices"

// Item is an index and its score.
type Item struct {
	Index int
	Score float32
}

// worse reports whether a ranks below b: a lower score, or the same score
// and a higher index (so the k kept are the same whatever the order of
// the pushes).
func worse(a, b Item) bool { return a.Score < b.Score || a.Score == b.Score && a.Index > b.Index }

// Heap keeps the K best items pushed.
type Heap struct {
	K     int
	items []Item
}

// New is a Heap of the k best.
func New(k int) *Heap { return &Heap{K: k, items: make([]Item, 0, max(k, 0))} }

// Reset forgets every item, keeping the memory.
func (h *Heap) Reset() { h.items = h.items[:0] }

// Len is how many items are kept.
func (h *Heap) Len() int { return len(h.items) }

// Push offers an item; it is kept while fewer than K are, or if it beats
// the worst kept, which then goes.
func (h *Heap) Push(index int, score float32) {
	it := Item{index, score}
	s := h.items
	if len(s) < h.K {
		s = append(s, it)
		for i := len(s) - 1; i > 0; { // sift up
			p := (i - 1) / 2
			if !worse(s[i], s[p]) {
				break
			}
			s[i], s[p] = s[p], s[i]
			i = p
		}
		h.items = s
		return
	}
	if h.K <= 0 || !worse(s[0], it) {
		return
	}
	s[0] = it
	for i := 0; ; { // sift down
		l, m := 2*i+1, i
		if l < len(s) && worse(s[l], s[m]) {
			m = l
		}
		if r := l + 1; r < len(s) && worse(s[r], s[m]) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
}

// Holds reports whether index is among the items kept.
func (h *Heap) Holds(index int) bool {
	return slices.ContainsFunc(h.items, func(it Item) bool { return it.Index == index })
}

// Beats reports whether an item of this index and score would be kept
// by Push (the heap has room, or it beats the worst kept).
func (h *Heap) Beats(index int, score float32) bool {
	return len(h.items) < h.K || h.K > 0 && worse(h.items[0], Item{index, score})
}

// Items are the items kept, in no particular order (the heap's own
// slice: read it before the next Push).
func (h *Heap) Items() []Item { return h.items }

// Sorted is the items kept, best first, as a new slice.
func (h *Heap) Sorted() []Item {
	out := slices.Clone(h.items)
	slices.SortFunc(out, func(a, b Item) int {
		switch {
		case worse(b, a):
			return -1
		case worse(a, b):
			return 1
		}
		return 0
	})
	return out
}
