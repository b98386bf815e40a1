package search

import (
	"context"
	"errors"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/storage"
)

func explainRanks(x Fused) *papersearch.Explanation {
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

// explainText fills each hit's matched terms (the query's words the paper
// holds, function words such as "from" aside) and best sentence: the
// abstract sentence whose stored vector (the one aspect similarity matches,
// see Sentence) is closest to the query vector or, for a paper stored
// without sentence vectors or a query without a vector, the one matching
// most query terms. It embeds nothing: an explained page costs one read of
// the hits' sentences more than a plain one.
func (e *Engine) explainText(ctx context.Context, hits []papersearch.Hit, query string, queryVec []float32) error {
	qtoks := lexical.Tokens(query)
	qterms := map[string]bool{}
	for _, t := range qtoks {
		qterms[t.Term] = true
	}
	var stored map[string][]storage.Sentence
	if queryVec != nil && len(hits) > 0 {
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = h.ID
		}
		var err error
		stored, err = e.store.Sentences(ctx, ids)
		switch {
		case errors.Is(err, storage.ErrNoSentences):
			stored = nil
		case err != nil:
			return err
		}
	}
	// The hits' words repeat, within a text and across them: each is
	// stemmed once.
	termOf := map[string]string{}
	for i := range hits {
		h := &hits[i]
		docTerms := map[string]bool{}
		for _, w := range lexical.Words(h.Paper.Text()) {
			t, ok := termOf[w]
			if !ok {
				t, _ = lexical.Term(w)
				termOf[w] = t
			}
			docTerms[t] = true
		}
		seen := map[string]bool{}
		for _, t := range qtoks {
			if docTerms[t.Term] && !seen[t.Word] && !lexical.IsFunctionWord(t.Word) {
				seen[t.Word] = true
				h.Explanation.MatchedTerms = append(h.Explanation.MatchedTerms, t.Word)
			}
		}
		h.Explanation.BestSentence = bestSentence(storage.Sentences(h.Paper), stored[h.ID], queryVec, qterms)
	}
	return nil
}

// bestSentence returns the sentence of ss closest to queryVec by their
// vectors (vecs[i] is ss[i]'s) when every sentence has one, else the one
// holding most of the query's terms; ties go to the earlier sentence.
func bestSentence(ss []string, vecs []storage.Sentence, queryVec []float32, qterms map[string]bool) string {
	byVector := queryVec != nil && len(vecs) == len(ss)
	best, bestScore := "", -2.0
	for i, s := range ss {
		var score float64
		if byVector {
			score = float64(embed.Dot(queryVec, vecs[i].Vector))
		} else {
			for _, t := range lexical.Analyze(s) {
				if qterms[t] {
					score++
				}
			}
		}
		if score > bestScore {
			best, bestScore = s, score
		}
	}
	return best
}
