package sqlite

import (
	"container/heap"
	"sort"

	"github.com/papersearch/papersearch/search/storage"
)

// topK keeps the k best candidates seen so far in a min-heap, so selecting
// from n candidates costs O(n log k) rather than a full sort.
type topK struct {
	k     int
	items candHeap
}

// newTopK keeps the k best of the n candidates it will be offered, with
// room for the fewer of the two.
func newTopK(k, n int) *topK { return &topK{k: k, items: make(candHeap, 0, max(min(k, n), 0))} }

// beats reports whether push would keep c now.
func (t *topK) beats(c storage.Candidate) bool {
	return t.k > 0 && (len(t.items) < t.k || better(c, t.items[0]))
}

// push offers a candidate; it is kept if it beats the current k-th best.
// Ties on score are broken by id, so results are deterministic.
func (t *topK) push(c storage.Candidate) {
	if !t.beats(c) {
		return
	}
	if len(t.items) < t.k {
		heap.Push(&t.items, c)
		return
	}
	t.items[0] = c
	heap.Fix(&t.items, 0)
}

// sorted returns the kept candidates, best first.
func (t *topK) sorted() []storage.Candidate {
	out := append([]storage.Candidate(nil), t.items...)
	sort.Slice(out, func(i, j int) bool { return better(out[i], out[j]) })
	return out
}

func better(a, b storage.Candidate) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.ID < b.ID
}

type candHeap []storage.Candidate

func (h candHeap) Len() int           { return len(h) }
func (h candHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h candHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)        { *h = append(*h, x.(storage.Candidate)) }
func (h *candHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}
