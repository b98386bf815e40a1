package search

import (
	"context"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/lexical"
)

func explainRanks(x fused) *papersearch.Explanation {
	ex := &papersearch.Explanation{DenseRank: x.DenseRank, LexicalRank: x.LexicalRank, MatchedTerms: []string{}}
	if x.DenseRank > 0 {
		s := x.DenseScore
		ex.DenseScore = &s
	}
	if x.LexicalRank > 0 {
		s := x.LexicalScore
		ex.LexicalScore = &s
	}
	return ex
}

// explainText fills each hit's matched terms and best sentence: the
// abstract sentence whose embedding is closest to the query vector or, with
// no vector, the one matching most query terms.
func (e *Engine) explainText(ctx context.Context, hits []papersearch.Hit, query string, queryVec []float32) {
	qtoks := lexical.Tokens(query)
	var (
		sentences [][]string
		all       []string
	)
	for i := range hits {
		h := &hits[i]
		docTerms := map[string]bool{}
		for _, t := range lexical.Analyze(h.Paper.Text()) {
			docTerms[t] = true
		}
		seen := map[string]bool{}
		for _, t := range qtoks {
			if docTerms[t.Term] && !seen[t.Word] {
				seen[t.Word] = true
				h.Explanation.MatchedTerms = append(h.Explanation.MatchedTerms, t.Word)
			}
		}
		ss := abstractSentences(h.Paper)
		sentences = append(sentences, ss)
		all = append(all, ss...)
	}
	var vecs [][]float32
	if queryVec != nil && len(all) > 0 {
		var err error
		if vecs, err = e.docs.Embed(ctx, all); err != nil {
			e.log.Warn("explain: could not embed sentences; choosing them by matched terms", "error", err)
			vecs = nil
		}
	}
	qterms := map[string]bool{}
	for _, t := range qtoks {
		qterms[t.Term] = true
	}
	next := 0
	for i, ss := range sentences {
		best, bestScore := "", -2.0
		for _, s := range ss {
			var score float64
			if vecs != nil {
				score = float64(embed.Dot(queryVec, vecs[next]))
			} else {
				for _, t := range lexical.Analyze(s) {
					if qterms[t] {
						score++
					}
				}
			}
			next++
			if score > bestScore {
				best, bestScore = s, score
			}
		}
		hits[i].Explanation.BestSentence = best
	}
}
