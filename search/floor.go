package search

import "github.com/papersearch/papersearch"

// relevanceFloors are, by the store's model, the least cosine similarity
// (as Explanation.DenseScore reports it) of a paper that answers a
// free-text question: Core for a question the gate's core models compare,
// All for one all of the store's models compare (a weakly evidenced one,
// see ModelGate). Each was chosen on the dev halves of the ML questions,
// the paraphrased questions and SciFact as the highest that keeps 95% of
// the judged answers ranked in the first 20, and measured on the held-out
// halves and on questions of one field asked over papers of another
// (docs/ranking.md, "A feed's relevance floor"). A model not listed has
// no floor.
var relevanceFloors = map[string]struct{ Core, All float32 }{ // read-only
	"bge-small-en-v1.5+e5-small-v2+all-MiniLM-L6-v2": {Core: 0.75, All: 0.60},
	"bge-small-en-v1.5+e5-small-v2":                  {Core: 0.75, All: 0.75},
}

// RelevanceFloor is the least dense cosine similarity at which a paper
// answers the free-text search that gave res, for the store's models; ok
// is false when none was measured for them. A feed lists no paper under
// it: a saved search wants what answers it, not the best of what is new.
func (e *Engine) RelevanceFloor(res Results) (floor float32, ok bool) {
	f, ok := relevanceFloors[e.store.Model().Name]
	if !ok {
		return 0, false
	}
	if e.gated() && res.Evidence != nil && e.weak(*res.Evidence) {
		return f.All, true
	}
	return f.Core, true
}

// AboveFloor reports whether a hit of a search that explained its
// results reaches floor: its dense cosine similarity does. A paper
// outside the dense candidates (it matched words alone) does not.
func AboveFloor(h papersearch.Hit, floor float32) bool {
	return h.Explanation != nil && h.Explanation.DenseScore != nil && *h.Explanation.DenseScore >= floor
}
