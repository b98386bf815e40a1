package search

import (
	"fmt"
	"math"
	"sort"

	"github.com/papersearch/papersearch/search/storage"
)

// FusionMethod names a way to merge the dense and lexical rankings.
type FusionMethod string

const (
	// RRF is reciprocal rank fusion: a paper scores Σ 1/(60 + rank) over
	// the lists it is in.
	RRF FusionMethod = "rrf"
	// Weighted min-max normalises each list's scores to [0, 1] per query and
	// adds them, the dense side weighted DenseWeight and the lexical side
	// 1 - DenseWeight; a paper missing from a list gets 0 there.
	Weighted FusionMethod = "weighted"
	// DBSF is distribution-based score fusion: each list's scores are
	// normalised by their spread over the query's candidates (mean − 3σ maps
	// to 0, mean + 3σ to 1, clipped, as Qdrant's DBSF does), then weighted
	// as Weighted does. A top score far above the rest keeps its lead; one
	// barely above the rest does not become 1.
	DBSF FusionMethod = "dbsf"
	// MaxNorm divides each list's scores by its best, so a list's scores keep
	// their ratios (a runner-up at 0.9 of the best stays at 0.9), then
	// weights them as Weighted does.
	MaxNorm FusionMethod = "max"
	// Margin is Weighted with a per-query dense weight: DenseWeight plus
	// MarginGain times the cosine margin between the dense list's first and
	// second papers (at most 0.9). A dense side that is sure of its first
	// paper is trusted more for that query.
	Margin FusionMethod = "margin"
	// Evidence is Weighted with the lexical side scaled by its evidence:
	// the share of the query's ideal BM25 score (Matches.Ideal) that its
	// best match reaches, at most 1. When the best lexical match holds only
	// a query's common words, its ordering counts for little; when it holds
	// the query's informative terms, Evidence is Weighted.
	Evidence FusionMethod = "evidence"
)

// rrfK is reciprocal rank fusion's constant.
const rrfK = 60

// ReciprocalRank is what a paper at rank (1-based) of one list adds to
// its score under reciprocal rank fusion: 1/(rrfK + rank). Every ranking
// fused by rank (hybrid search under RRF, a draft's sentences' searches)
// adds these.
func ReciprocalRank(rank int) float64 { return 1 / float64(rrfK+rank) }

// Fusion is a fusion rule.
type Fusion struct {
	Method      FusionMethod `json:"method"`
	DenseWeight float64      `json:"dense_weight,omitempty"` // for Weighted, in [0, 1]
	MarginGain  float64      `json:"margin_gain,omitempty"`  // for Margin
}

func (f Fusion) String() string {
	if f.Method == Margin {
		return fmt.Sprintf("margin(dense=%.2f, gain=%g)", f.DenseWeight, f.MarginGain)
	}
	if f.Method == Weighted || f.Method == DBSF || f.Method == MaxNorm || f.Method == Evidence {
		return fmt.Sprintf("%s(dense=%.2f)", f.Method, f.DenseWeight)
	}
	return string(f.Method)
}

// DefaultFusion is the fusion the engine uses unless told otherwise, chosen
// by `papersearch eval --fusion-sweep` on both dev signals (SciFact train
// and the ML research questions) and the seed questions, with the default
// model (bge-small-en-v1.5+e5-small-v2, each with its instructions) and
// BM25 (k1 0.9, b 0.4): see the table in docs/ranking.md.
var DefaultFusion = Fusion{Method: Evidence, DenseWeight: 0.5}

// Fused is one candidate after fusion, with where it stood in each list.
type Fused struct {
	ID           string
	Score        float64
	DenseRank    int // 1-based; 0 when not in the dense list
	LexicalRank  int
	DenseScore   float32
	LexicalScore float32
}

// fuse merges the two rankings (each best first) under f, best first, ties
// broken by id so the order is deterministic.
func fuse(dense []storage.Candidate, matches storage.Matches, f Fusion) []Fused {
	lexical := matches.Candidates
	byID := make(map[string]*Fused, len(dense)+len(lexical))
	get := func(id string) *Fused {
		x, ok := byID[id]
		if !ok {
			x = &Fused{ID: id}
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
	case Weighted, DBSF, MaxNorm, Margin, Evidence:
		dn, ln := normaliser(dense), normaliser(lexical)
		w, evidence := f.DenseWeight, 1.0
		if f.Method == Evidence && matches.Ideal > 0 && len(lexical) > 0 {
			evidence = evidenceOf(matches)
		}
		if f.Method == Margin && len(dense) > 1 {
			w = math.Min(0.9, w+f.MarginGain*float64(dense[0].Score-dense[1].Score))
		}
		switch f.Method {
		case DBSF:
			dn, ln = spreadNormaliser(dense), spreadNormaliser(lexical)
		case MaxNorm:
			dn, ln = maxNormaliser(dense), maxNormaliser(lexical)
		}
		for _, x := range byID {
			if x.DenseRank > 0 {
				x.Score += w * dn(x.DenseScore)
			}
			if x.LexicalRank > 0 {
				x.Score += (1 - w) * evidence * ln(x.LexicalScore)
			}
		}
	default: // RRF
		for _, x := range byID {
			if x.DenseRank > 0 {
				x.Score += ReciprocalRank(x.DenseRank)
			}
			if x.LexicalRank > 0 {
				x.Score += ReciprocalRank(x.LexicalRank)
			}
		}
	}
	out := make([]Fused, 0, len(byID))
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
func single(list []storage.Candidate, dense bool) []Fused {
	out := make([]Fused, len(list))
	for i, c := range list {
		out[i] = Fused{ID: c.ID, Score: float64(c.Score)}
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
func normaliser(list []storage.Candidate) func(float32) float64 {
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

// spreadNormaliser returns distribution-based normalisation over a list's
// scores: mean − 3σ maps to 0 and mean + 3σ to 1, clipped to [0, 1]; a list
// of equal scores maps to 1.
func spreadNormaliser(list []storage.Candidate) func(float32) float64 {
	if len(list) == 0 {
		return func(float32) float64 { return 0 }
	}
	var sum, sq float64
	for _, c := range list {
		sum += float64(c.Score)
		sq += float64(c.Score) * float64(c.Score)
	}
	n := float64(len(list))
	mean := sum / n
	sd := math.Sqrt(math.Max(sq/n-mean*mean, 0))
	if sd == 0 {
		return func(float32) float64 { return 1 }
	}
	return func(s float32) float64 { return math.Min(math.Max((float64(s)-mean+3*sd)/(6*sd), 0), 1) }
}

// maxNormaliser divides a list's scores by its best score (when positive).
func maxNormaliser(list []storage.Candidate) func(float32) float64 {
	hi := 0.0
	for _, c := range list {
		hi = math.Max(hi, float64(c.Score))
	}
	if hi <= 0 {
		return func(float32) float64 { return 0 }
	}
	return func(s float32) float64 { return math.Max(float64(s), 0) / hi }
}

// evidenceOf is the share of the query's ideal BM25 score that its best
// match reaches, at most 1; 0 when nothing matched.
func evidenceOf(m storage.Matches) float64 {
	if m.Ideal <= 0 || len(m.Candidates) == 0 {
		return 0
	}
	return math.Min(1, float64(m.Candidates[0].Score)/m.Ideal)
}

// WithFusion returns an engine over the same store and embedder that fuses
// with f.
func (e *Engine) WithFusion(f Fusion) *Engine {
	c := *e
	c.opts.Fusion = &f
	return &c
}

// Fusion is the rule the engine fuses hybrid results by.
func (e *Engine) Fusion() Fusion { return *e.opts.Fusion }
