package search

import (
	"container/heap"
	"sort"
)

// topK keeps the k best candidates seen so far in a min-heap, so selecting
// from n candidates costs O(n log k) rather than a full sort.
type topK struct {
	k     int
	items candHeap
}

func newTopK(k int) *topK { return &topK{k: k, items: make(candHeap, 0, k)} }

// push offers a candidate; it is kept if it beats the current k-th best.
// Ties on score are broken by id, so results are deterministic.
func (t *topK) push(c Candidate) {
	if t.k <= 0 {
		return
	}
	if len(t.items) < t.k {
		heap.Push(&t.items, c)
		return
	}
	if better(c, t.items[0]) {
		t.items[0] = c
		heap.Fix(&t.items, 0)
	}
}

// sorted returns the kept candidates, best first.
func (t *topK) sorted() []Candidate {
	out := append([]Candidate(nil), t.items...)
	sort.Slice(out, func(i, j int) bool { return better(out[i], out[j]) })
	return out
}

func better(a, b Candidate) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.ID < b.ID
}

type candHeap []Candidate

func (h candHeap) Len() int           { return len(h) }
func (h candHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h candHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)        { *h = append(*h, x.(Candidate)) }
func (h *candHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// rowTopK keeps the k rows with the largest approximate scores, for a first
// pass that needs no ids or tie-breaking.
type rowTopK struct {
	k     int
	items rowHeap
}

type rowScore struct {
	row   int
	score float32
}

func newRowTopK(k int) *rowTopK { return &rowTopK{k: k, items: make(rowHeap, 0, k)} }

func (t *rowTopK) push(row int, score float32) {
	if len(t.items) < t.k {
		heap.Push(&t.items, rowScore{row, score})
		return
	}
	if score > t.items[0].score {
		t.items[0] = rowScore{row, score}
		heap.Fix(&t.items, 0)
	}
}

// rows returns the kept rows in no particular order.
func (t *rowTopK) rows() []int {
	out := make([]int, len(t.items))
	for i, x := range t.items {
		out[i] = x.row
	}
	return out
}

type rowHeap []rowScore

func (h rowHeap) Len() int           { return len(h) }
func (h rowHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h rowHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *rowHeap) Push(x any)        { *h = append(*h, x.(rowScore)) }
func (h *rowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
