package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/roles"
)

// probe is one vector an aspect query matches with candidates' sentences:
// a sentence of a query paper, or the query's text.
type probe struct {
	vec      []float32
	sentence papersearch.MatchedSentence // as explanations show it
	// sameRole matches only candidates' sentences of the aspect's role
	// (all of them when a candidate has none).
	sameRole bool
}

// aspectScored is a candidate as an aspect query scored it: its place in
// the ranking by sentences and the pair of sentences that matched best.
type aspectScored struct {
	fused
	match  papersearch.SentenceMatch
	qi, ci int
}

// scoreByAspect ranks cands by the probes' matches with their sentences,
// fused in mode with their BM25 for the probes' words, and returns the
// ranking, each candidate's scores (its fused ranks and best pair) and
// sentences by id.
func (e *Engine) scoreByAspect(ctx context.Context, mode Mode, probes []probe, role roles.Role, byRole bool,
	cands []Candidate) ([]fused, map[string]aspectScored, map[string][]Sentence, error) {
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.ID
	}
	theirs, err := e.store.Sentences(ctx, ids)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read sentences: %w", err)
	}
	whole := make(map[string][]float32) // candidates without sentences
	for _, id := range ids {
		if theirs[id] == nil {
			d, err := e.store.Get(ctx, id)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return nil, nil, nil, err
			}
			whole[id] = d.Vector
		}
	}

	wholeWeight := e.opts.research.AspectWhole
	type scored = aspectScored
	ranked := make([]scored, 0, len(cands))
	for rank, c := range cands {
		all := theirs[c.ID]
		// pool returns the places of the candidate's sentences a probe is
		// compared with.
		pool := func(p probe) []int {
			var out []int
			for j, s := range all {
				if !byRole || !p.sameRole || s.Role == role {
					out = append(out, j)
				}
			}
			if len(out) == 0 {
				for j := range all {
					out = append(out, j)
				}
			}
			return out
		}
		x := scored{fused: fused{ID: c.ID, DenseRank: rank + 1, DenseScore: c.Score}, ci: -1}
		var sum, best float32 = 0, -2
		for pi, p := range probes {
			top, arg := float32(-2), -1
			if len(all) == 0 && whole[c.ID] != nil {
				top = embed.Dot(p.vec, whole[c.ID])
			}
			for _, j := range pool(p) {
				if d := embed.Dot(p.vec, all[j].Vector); d > top {
					top, arg = d, j
				}
			}
			sum += top
			if top > best {
				best, x.qi, x.ci = top, pi, arg
			}
		}
		x.Score = float64(best)
		if e.opts.research.AspectMatch == MatchSum {
			x.Score = float64(sum) / float64(len(probes))
		}
		x.Score = (1-wholeWeight)*x.Score + wholeWeight*float64(c.Score)
		x.match.Similarity = best
		ranked = append(ranked, x)
	}
	slices.SortStableFunc(ranked, func(a, b scored) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.ID, b.ID))
	})
	bySentences := make([]Candidate, len(ranked))
	for i, x := range ranked {
		bySentences[i] = Candidate{ID: x.ID, Score: float32(x.Score)}
	}
	// The lexical side: the same candidates by BM25 for the words of the
	// query's sentences (or text).
	var lex Matches
	if mode != Dense && len(ids) > 0 {
		words := make([]string, len(probes))
		for i, p := range probes {
			words[i] = p.sentence.Text
		}
		if lex, err = e.store.Lexical(ctx, lexical.Analyze(strings.Join(words, "\n")), len(ids), papersearch.Filter{Only: ids}); err != nil {
			return nil, nil, nil, fmt.Errorf("lexical retrieval: %w", err)
		}
	}
	list := merge(mode, bySentences, lex, *e.opts.research.AspectFusion)
	byID := make(map[string]aspectScored, len(ranked))
	for _, x := range ranked {
		byID[x.ID] = x
	}
	for _, x := range list {
		s := byID[x.ID]
		s.fused = x
		byID[x.ID] = s
	}
	return list, byID, theirs, nil
}
