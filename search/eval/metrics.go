package eval

import (
	"math"
	"sort"
)

// NDCG returns nDCG@k of a ranking as trec_eval's ndcg_cut computes it:
// gain is the grade, discounted by log2(rank + 1), over the ideal ordering
// of the judged grades.
func NDCG(ranked []string, rels map[string]int, k int) float64 {
	var dcg float64
	for i, id := range ranked[:min(k, len(ranked))] {
		if g := rels[id]; g > 0 {
			dcg += float64(g) / math.Log2(float64(i+2))
		}
	}
	var grades []int
	for _, g := range rels {
		if g > 0 {
			grades = append(grades, g)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(grades)))
	var ideal float64
	for i, g := range grades[:min(k, len(grades))] {
		ideal += float64(g) / math.Log2(float64(i+2))
	}
	if ideal == 0 {
		return 0
	}
	return dcg / ideal
}

// Recall returns the share of relevant documents in the first k.
func Recall(ranked []string, rels map[string]int, k int) float64 {
	relevant, found := 0, 0
	for _, g := range rels {
		if g > 0 {
			relevant++
		}
	}
	for _, id := range ranked[:min(k, len(ranked))] {
		if rels[id] > 0 {
			found++
		}
	}
	if relevant == 0 {
		return 0
	}
	return float64(found) / float64(relevant)
}

// MRR returns the reciprocal rank of the first relevant document within the
// first k, or 0.
func MRR(ranked []string, rels map[string]int, k int) float64 {
	for i, id := range ranked[:min(k, len(ranked))] {
		if rels[id] > 0 {
			return 1 / float64(i+1)
		}
	}
	return 0
}
