package search

import (
	"context"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/storage"
)

// Retrieved is a free-text query's first retrievals in hybrid mode and
// their fusion: what a second stage re-scores (eval.Features measures it).
type Retrieved struct {
	// Fused are the candidates after fusion, best first.
	Fused []Fused
	// Dense and Lexical are the two retrievals, each best first, and
	// Evidence the lexical side's (the share of the query's ideal BM25
	// score its best match reaches).
	Dense    []storage.Candidate
	Lexical  storage.Matches
	Evidence float64
	// Terms are the query's analysed terms; Vector is the query's vector
	// over all of the store's models, before the model gate; Filter is
	// the filter the retrievals kept to.
	Terms  []string
	Vector []float32
	Filter papersearch.Filter
}

// Retrieve is a free-text question's Retrieved in hybrid mode, as a search
// for it ranks them before paging; the zero Retrieved when one side found
// nothing.
func (e *Engine) Retrieve(ctx context.Context, text string) (Retrieved, error) {
	q := Query{Text: text, Mode: Hybrid, Limit: MaxLimit}
	if err := q.validate(); err != nil {
		return Retrieved{}, err
	}
	rt, r, err := e.retrieve(ctx, q, true)
	if err != nil || len(rt.dense) == 0 || len(rt.lex.Candidates) == 0 {
		return Retrieved{}, err
	}
	return Retrieved{Fused: r.first, Dense: rt.dense, Lexical: rt.lex, Evidence: evidenceOf(rt.lex),
		Terms: rt.terms, Vector: rt.allModels, Filter: rt.filter}, nil
}
