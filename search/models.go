package search

import (
	"github.com/papersearch/papersearch/embed"
)

// ModelGate says which of the models of a store that holds several (an
// embed.Pair's vectors) compare a query with the papers.
type ModelGate struct {
	// Core is how many of the store's models, the first ones of its
	// vectors, rank every query but a weakly evidenced free-text one:
	// similar papers, aspects, examples alone, and free-text queries whose
	// lexical evidence reaches Below. 0 means all of them, always.
	Core int
	// Below is the lexical evidence (see Results.Evidence) under which a
	// free-text query is ranked by all of the models.
	Below float64
}

// DefaultModelGate lets a third model join only the questions whose words
// the papers barely hold. With the three in-process models
// (bge-small-en-v1.5+e5-small-v2+all-MiniLM-L6-v2) MiniLM then helps the
// paraphrased questions (+0.067 ± 0.029 nDCG@10 on the held-out half)
// without the loss it brings to SciFact and the ML questions when it
// ranks everything (docs/ranking.md, fourth and fifth rounds). A store of
// one or two models is unaffected.
var DefaultModelGate = ModelGate{Core: 2, Below: 0.4}

// coreDim is how many leading dimensions of a stored vector the gate's
// core models fill, and how many models there are in all; 0 when every
// query is compared by all of them.
func coreDim(byModel []embed.ModelInfo, g ModelGate) (dim, models int) {
	parts := byModel[1:] // byModel[0] is the whole (see embedding.Models.List)
	if len(parts) == 0 { // one model
		return 0, 1
	}
	if g.Core <= 0 || len(parts) <= g.Core {
		return 0, len(parts)
	}
	for _, m := range parts[:g.Core] {
		dim += m.Dim
	}
	return dim, len(parts)
}

// weak reports whether a free-text query with this lexical evidence is
// compared by all of the store's models.
func (e *Engine) weak(evidence float64) bool { return evidence < e.opts.ModelGate.Below }

// coreModels is how many of the store's models, the first ones, the gate
// keeps for every query but a weakly evidenced free-text one: all of them
// when it keeps them all.
func (e *Engine) coreModels() int {
	if e.gated() {
		return e.opts.ModelGate.Core
	}
	return e.models
}

// gated reports whether some queries are compared by fewer models than the
// store holds.
func (e *Engine) gated() bool { return e.coreDim > 0 }

// core returns v, a query vector over all of the store's models, as the
// gate's core models see it: their parts only, scaled so that its dot
// product with a stored vector is the mean of those models' cosine
// similarities (as a vector of all of them gives the mean of all). v
// itself when the gate keeps every model; nil stays nil.
func (e *Engine) core(v []float32) []float32 {
	return e.coreOf(v, len(v))
}

// coreOf is core's vector in n dimensions: the core models' scaled parts
// of v, then zeros (n is at least e.coreDim).
func (e *Engine) coreOf(v []float32, n int) []float32 {
	if !e.gated() || v == nil || len(v) < e.coreDim {
		return v
	}
	// Each of n models' parts of a stored vector is its unit vector
	// scaled by 1/√n, and so is the query's: keeping k parts and scaling
	// them by n/k makes the dot product Σ cosᵢ / k.
	scale := float32(e.models) / float32(e.opts.ModelGate.Core)
	out := make([]float32, n)
	for i, x := range v[:e.coreDim] {
		out[i] = x * scale
	}
	return out
}
