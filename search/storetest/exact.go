package storetest

import (
	"cmp"
	"math"
	"slices"

	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/storage"
)

// Exact returns the k documents of docs nearest to q by cosine, best
// first, ties broken by id: the brute-force answer a store's Nearest must
// give.
func Exact(q []float32, docs []storage.Document, k int) []storage.Candidate {
	all := make([]storage.Candidate, len(docs))
	for i, d := range docs {
		all[i] = storage.Candidate{ID: d.Paper.ID, Score: embed.Dot(q, d.Vector)}
	}
	slices.SortFunc(all, func(a, b storage.Candidate) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return all[:min(k, len(all))]
}

// ids lists the candidates' ids in order.
func ids(cs []storage.Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-5 }
