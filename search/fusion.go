package search

import (
	"fmt"
	"math"
	"sort"
)

// FusionMethod names a way to merge the dense and lexical rankings.
type FusionMethod string

const (
	// RRF is reciprocal rank fusion: a paper scores Σ 1/(RRFK + rank) over
	// the lists it is in.
	RRF FusionMethod = "rrf"
	// Weighted min-max normalises each list's scores to [0, 1] per query and
	// adds them, the dense side weighted DenseWeight and the lexical side
	// 1 - DenseWeight; a paper missing from a list gets 0 there.
	Weighted FusionMethod = "weighted"
)

// RRFK is reciprocal rank fusion's constant.
const RRFK = 60

// Fusion is a fusion rule.
type Fusion struct {
	Method      FusionMethod `json:"method"`
	DenseWeight float64      `json:"dense_weight,omitempty"` // for Weighted, in [0, 1]
}

func (f Fusion) String() string {
	if f.Method == Weighted {
		return fmt.Sprintf("weighted(dense=%.2f)", f.DenseWeight)
	}
	return string(f.Method)
}

// DefaultFusion is the fusion the engine uses unless told otherwise, chosen
// by `papersearch eval --fusion-sweep` on SciFact (BEIR, train split, 809
// queries) with all-MiniLM-L6-v2 and BM25 (k1 0.9, b 0.4), nDCG@10:
// see the table in docs/ranking.md and the closing note of the issue.
var DefaultFusion = Fusion{Method: Weighted, DenseWeight: 0.4}

// fused is one candidate after fusion, with where it stood in each list.
type fused struct {
	ID           string
	Score        float64
	DenseRank    int // 1-based; 0 when not in the dense list
	LexicalRank  int
	DenseScore   float32
	LexicalScore float32
}

// fuse merges the two rankings (each best first) under f, best first, ties
// broken by id so the order is deterministic.
func fuse(dense, lexical []Candidate, f Fusion) []fused {
	byID := make(map[string]*fused, len(dense)+len(lexical))
	get := func(id string) *fused {
		x, ok := byID[id]
		if !ok {
			x = &fused{ID: id}
			byID[id] = x
		}
		return x
	}
	for i, c := range dense {
		x := get(c.ID)
		x.DenseRank, x.DenseScore = i+1, c.Score
	}
	for i, c := range lexical {
		x := get(c.ID)
		x.LexicalRank, x.LexicalScore = i+1, c.Score
	}
	switch f.Method {
	case Weighted:
		dn, ln := normaliser(dense), normaliser(lexical)
		for _, x := range byID {
			if x.DenseRank > 0 {
				x.Score += f.DenseWeight * dn(x.DenseScore)
			}
			if x.LexicalRank > 0 {
				x.Score += (1 - f.DenseWeight) * ln(x.LexicalScore)
			}
		}
	default: // RRF
		for _, x := range byID {
			if x.DenseRank > 0 {
				x.Score += 1 / float64(RRFK+x.DenseRank)
			}
			if x.LexicalRank > 0 {
				x.Score += 1 / float64(RRFK+x.LexicalRank)
			}
		}
	}
	out := make([]fused, 0, len(byID))
	for _, x := range byID {
		out = append(out, *x)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// single turns one ranking into fused results scored by its own scores.
func single(list []Candidate, dense bool) []fused {
	out := make([]fused, len(list))
	for i, c := range list {
		out[i] = fused{ID: c.ID, Score: float64(c.Score)}
		if dense {
			out[i].DenseRank, out[i].DenseScore = i+1, c.Score
		} else {
			out[i].LexicalRank, out[i].LexicalScore = i+1, c.Score
		}
	}
	return out
}

// normaliser returns min-max normalisation over a list's scores: the best
// maps to 1, the worst to 0; a list of equal scores maps to 1.
func normaliser(list []Candidate) func(float32) float64 {
	if len(list) == 0 {
		return func(float32) float64 { return 0 }
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range list {
		lo = math.Min(lo, float64(c.Score))
		hi = math.Max(hi, float64(c.Score))
	}
	if hi == lo {
		return func(float32) float64 { return 1 }
	}
	return func(s float32) float64 { return (float64(s) - lo) / (hi - lo) }
}
