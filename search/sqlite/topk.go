package sqlite

import (
	"container/heap"
	"sort"

	"github.com/papersearch/papersearch/search"
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
func (t *topK) push(c search.Candidate) {
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
func (t *topK) sorted() []search.Candidate {
	out := append([]search.Candidate(nil), t.items...)
	sort.Slice(out, func(i, j int) bool { return better(out[i], out[j]) })
	return out
}

func better(a, b search.Candidate) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.ID < b.ID
}

type candHeap []search.Candidate

func (h candHeap) Len() int           { return len(h) }
func (h candHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h candHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)        { *h = append(*h, x.(search.Candidate)) }
func (h *candHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// rowTopK keeps the k rows with the largest approximate scores, for a first
// pass that needs no ids or tie-breaking. It is a min-heap on score kept by
// hand, so pushing allocates nothing.
type rowTopK struct {
	k     int
	items []rowScore
}

type rowScore struct {
	row   int
	score float32
}

func newRowTopK(k int) *rowTopK { return &rowTopK{k: k, items: make([]rowScore, 0, k)} }

func (t *rowTopK) push(row int, score float32) {
	h := t.items
	if len(h) < t.k {
		h = append(h, rowScore{row, score})
		for i := len(h) - 1; i > 0; { // sift up
			parent := (i - 1) / 2
			if h[parent].score <= h[i].score {
				break
			}
			h[parent], h[i] = h[i], h[parent]
			i = parent
		}
		t.items = h
		return
	}
	if score <= h[0].score {
		return
	}
	h[0] = rowScore{row, score}
	for i := 0; ; { // sift down
		l, smallest := 2*i+1, i
		if l < len(h) && h[l].score < h[smallest].score {
			smallest = l
		}
		if r := l + 1; r < len(h) && h[r].score < h[smallest].score {
			smallest = r
		}
		if smallest == i {
			break
		}
		h[i], h[smallest] = h[smallest], h[i]
		i = smallest
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
