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
	"github.com/papersearch/papersearch/search/storage"
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
	Fused
	match  papersearch.SentenceMatch
	qi, ci int
}

// scoreByAspect ranks cands by the probes' matches with their sentences,
// fused in mode with their BM25 for the probes' words, and returns the
// ranking, each candidate's scores (its fused ranks and best pair) and
// its sentences' roles by id.
func (e *Engine) scoreByAspect(ctx context.Context, mode Mode, probes []probe, role roles.Role, byRole bool,
	cands []storage.Candidate) ([]Fused, map[string]aspectScored, map[string][]roles.Role, error) {
	m := aspectMatcher{probes: probes, role: role, byRole: byRole, match: e.opts.research.AspectMatch,
		wholeWeight: e.opts.research.AspectWhole}
	ids := make([]string, len(cands))
	at := make(map[string][]int, len(cands)) // each id's places in cands
	for i, c := range cands {
		ids[i] = c.ID
		at[c.ID] = append(at[c.ID], i)
	}
	// Each candidate is scored as the store shows its sentences (from
	// several readers at once; each id's places are its own), the
	// sentences themselves not kept.
	ranked := make([]aspectScored, len(cands))
	theirs := make([][]roles.Role, len(cands))
	seen := make([]bool, len(cands))
	err := e.store.VisitSentences(ctx, ids, func(id string, ss []storage.Sentence) {
		rs := make([]roles.Role, len(ss))
		for j, s := range ss {
			rs[j] = s.Role
		}
		for _, i := range at[id] {
			ranked[i], theirs[i], seen[i] = m.score(cands[i], i, ss, nil), rs, true
		}
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read sentences: %w", err)
	}
	for i, c := range cands { // those without sentences, by their whole vector
		if !seen[i] {
			d, err := e.store.Get(ctx, c.ID)
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				return nil, nil, nil, err
			}
			ranked[i] = m.score(c, i, nil, d.Vector)
		}
	}
	roleOf := make(map[string][]roles.Role, len(cands))
	for i, c := range cands {
		roleOf[c.ID] = theirs[i]
	}
	slices.SortStableFunc(ranked, func(a, b aspectScored) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.ID, b.ID))
	})
	bySentences := make([]storage.Candidate, len(ranked))
	for i, x := range ranked {
		bySentences[i] = storage.Candidate{ID: x.ID, Score: float32(x.Score)}
	}
	// The lexical side: the same candidates by BM25 for the words of the
	// query's sentences (or text).
	var lex storage.Matches
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
		s.Fused = x
		byID[x.ID] = s
	}
	return list, byID, roleOf, nil
}

// aspectMatcher scores a candidate by how well the probes match its
// sentences.
type aspectMatcher struct {
	probes      []probe
	role        roles.Role
	byRole      bool
	match       string // matchBest or matchSum
	wholeWeight float64
}

// compares reports whether probe p is compared with sentence s: every
// sentence, unless p asks for the aspect's role and s has another.
func (m aspectMatcher) compares(p probe, s storage.Sentence) bool {
	return !m.byRole || !p.sameRole || s.Role == m.role
}

// pooled reports whether probe p is compared with the sentences of all
// that compares allows (true), or, where it allows none, with all of them.
func (m aspectMatcher) pooled(p probe, all []storage.Sentence) bool {
	return slices.ContainsFunc(all, func(s storage.Sentence) bool { return m.compares(p, s) })
}

// score is candidate c, at rank in the dense ranking, scored by its
// sentences all (or its whole vector where it has none): the best probe's
// best match, or their mean under matchSum, blended with its dense score
// by wholeWeight.
func (m aspectMatcher) score(c storage.Candidate, rank int, all []storage.Sentence, whole []float32) aspectScored {
	x := aspectScored{Fused: Fused{ID: c.ID, DenseRank: rank + 1, DenseScore: c.Score}, ci: -1}
	var sum, best float32 = 0, -2
	for pi, p := range m.probes {
		top, arg := float32(-2), -1
		if len(all) == 0 && whole != nil {
			top = embed.Dot(p.vec, whole)
		}
		pooled := m.pooled(p, all)
		for j, s := range all {
			if pooled && !m.compares(p, s) {
				continue
			}
			if d := embed.Dot(p.vec, s.Vector); d > top {
				top, arg = d, j
			}
		}
		sum += top
		if top > best {
			best, x.qi, x.ci = top, pi, arg
		}
	}
	x.Score = float64(best)
	if m.match == matchSum {
		x.Score = float64(sum) / float64(len(m.probes))
	}
	x.Score = (1-m.wholeWeight)*x.Score + m.wholeWeight*float64(c.Score)
	x.match.Similarity = best
	return x
}
