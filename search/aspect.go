package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/roles"
	"github.com/papersearch/papersearch/search/storage"
)

// Aspect is what a similar-paper query compares: the whole paper, or the
// sentences of one rhetorical role ("papers with a similar method").
type Aspect string

const (
	WholePaper       Aspect = ""
	BackgroundAspect Aspect = "background" // the problem and motivation
	MethodAspect     Aspect = "method"
	ResultAspect     Aspect = "result"
)

// role returns the sentence role an aspect compares; ok is false for the
// whole paper.
func (a Aspect) role() (_ roles.Role, ok bool) {
	switch a {
	case BackgroundAspect:
		return roles.Background, true
	case MethodAspect:
		return roles.Method, true
	case ResultAspect:
		return roles.Result, true
	}
	return 0, false
}

// defaultAspectFusion merges an aspect query's sentence matches with BM25
// of its sentences' words: Evidence with the sentences weighted 0.6, the
// rule that, on the aspect dev signal (docs/ranking.md), beat whole-paper
// similarity for every aspect (the engine's DefaultFusion, weighting both
// sides equally, lost the method and background aspects' lead).
var defaultAspectFusion = Fusion{Method: Evidence, DenseWeight: 0.6}

// defaultAspectDepth is how many papers, nearest to the query paper as a
// whole and within the filter, an aspect query ranks again by their
// sentences (Options.AspectDepth).
const defaultAspectDepth = 150

// How an aspect query scores a candidate from its query sentences' best
// matches (see Options.AspectMatch).
const (
	// matchBest scores the single best pair of a query sentence and a
	// candidate's sentence (the default).
	matchBest = "best"
	// matchSum scores the mean, over the query's sentences, of each one's
	// best cosine similarity among the candidate's sentences: every
	// sentence of the aspect must find a partner.
	matchSum = "sum"
)

// validateAspect checks the aspect and sentences of a similar query.
func (sq SimilarQuery) validateAspect() error {
	if _, byRole := sq.Aspect.role(); sq.Aspect != WholePaper && !byRole {
		return invalidField("aspect", "must be background, method or result")
	}
	if len(sq.Sentences) > storage.MaxSentences || sq.Sentences != nil && len(sq.Sentences) == 0 {
		return invalidField("sentences", fmt.Sprintf("must name 1 to %d sentences", storage.MaxSentences))
	}
	for i, s := range sq.Sentences {
		if s < 0 || s >= storage.MaxSentences {
			return invalidField(fmt.Sprintf("sentences/%d", i), fmt.Sprintf("must be from 0 to %d", storage.MaxSentences-1))
		}
	}
	return nil
}

// similarByAspect ranks the papers nearest to sq.ID as a whole (the first
// AspectDepth allowed by the filter) by how well its sentences of the
// aspect, or the sentences it names, match each paper's sentences (only
// those of the same role under AspectSameRole; its whole vector when it
// has no sentence vectors), scored by the engine's AspectMatch rule
// (weighed with the whole paper's similarity when AspectWhole is set); in
// hybrid mode that ranking is fused (AspectFusion) with the same papers'
// BM25 ranking for the words of those sentences, in lexical mode the BM25
// ranking alone is used. A sentence named that the paper does not have,
// or an aspect none of its sentences has, is ErrNotFound.
func (e *Engine) similarByAspect(ctx context.Context, start time.Time, sq SimilarQuery, q Query, doc storage.Document) (Results, error) {
	role, byRole := sq.Aspect.role()
	key, _ := json.Marshal([]any{sq.ID, sq.Aspect, sq.Sentences})
	fp := Query{Text: string(key), Filter: sq.Filter, Mode: q.Mode}.fingerprint("similar-aspect")
	at, err := e.at(start, sq.Cursor, fp)
	if err != nil {
		return Results{}, err
	}
	if !e.store.KeepsSentences() {
		return Results{}, fmt.Errorf("aspect: %w", storage.ErrNoSentences)
	}
	if doc.Sentences == nil { // stored before sentences were kept
		if err := e.embedding.Documents(ctx, []*storage.Document{&doc}); err != nil {
			return Results{}, fmt.Errorf("embed the sentences of %s: %w", sq.ID, err)
		}
	}
	texts := storage.Sentences(doc.Paper)

	// The query: the named sentences, else those of the aspect's role.
	var query []int
	if sq.Sentences != nil {
		for i, s := range sq.Sentences {
			if s >= len(doc.Sentences) {
				return Results{}, missingField(fmt.Sprintf("sentences/%d", i), fmt.Sprintf("names sentence %d, but paper %s has %d (0 to %d)", s, sq.ID, len(doc.Sentences), len(doc.Sentences)-1))
			}
			if !slices.Contains(query, s) {
				query = append(query, s)
			}
		}
	} else {
		for i, s := range doc.Sentences {
			if s.Role == role {
				query = append(query, i)
			}
		}
		if len(query) == 0 {
			// No sentence of the aspect: the paper as a whole answers,
			// and the response says so, so that a client asking by aspect
			// always gets an answer.
			whole := sq
			whole.Aspect = WholePaper
			res, err := e.Similar(ctx, whole)
			res.Degraded = append(res.Degraded, "aspect")
			return res, err
		}
	}

	filter := sq.Filter
	filter.Exclude = []string{sq.ID}
	candidates := func(ctx context.Context, depth int) ([]storage.Candidate, error) {
		c, err := e.nearest(ctx, e.core(doc.Vector), depth, filter)
		if err != nil {
			return nil, fmt.Errorf("dense retrieval: %w", err)
		}
		return c, nil
	}
	probes := make([]probe, len(query))
	for i, qi := range query {
		probes[i] = probe{vec: e.core(doc.Sentences[qi].Vector), sameRole: e.opts.research.AspectSameRole,
			sentence: papersearch.MatchedSentence{Index: qi, Role: doc.Sentences[qi].Role.String(), Text: texts[qi]}}
	}
	return e.rankByAspect(ctx, at, q, aspectProbes{probes: probes, role: role, byRole: byRole}, candidates)
}

// searchByAspect answers a search with an aspect: the candidates are the
// AspectDepth papers nearest to the dense query (the text moved toward the
// liked papers) within the filter; the probes are the text, matched with
// each candidate's sentences of the aspect's role, and each liked paper's
// sentences of that role, matched with all of a candidate's sentences (as
// in similarByAspect), and the mode applies as there, the BM25 side for
// the words of the text and those sentences. A liked paper without a
// sentence of the role is matched as a whole (its paper vector), and the
// results name "aspect" among their Degraded.
func (e *Engine) searchByAspect(ctx context.Context, start time.Time, q Query) (Results, error) {
	role, ok := q.Aspect.role()
	if !ok {
		return Results{}, invalidField("aspect", "must be background, method or result")
	}
	fp := q.fingerprint("search-aspect-" + string(q.Aspect))
	at, err := e.at(start, q.Cursor, fp)
	if err != nil {
		return Results{}, err
	}
	if !e.store.KeepsSentences() {
		return Results{}, fmt.Errorf("aspect: %w", storage.ErrNoSentences)
	}
	var probes []probe
	var textVec []float32 // the text's vector as the core models see it
	wholePaper := false   // a liked paper without a sentence of the role
	if strings.TrimSpace(q.Text) != "" {
		// The core models compare the text; every model when liked or
		// disliked papers join it in the candidates' query (denseQuery,
		// which then finds them all remembered).
		models := e.coreModels()
		if len(q.Like)+len(q.Unlike) > 0 {
			models = e.models
		}
		v, err := e.embedding.QueryModels(ctx, q.Text, 0, models)
		if err != nil {
			return Results{}, err
		}
		textVec = e.core(v)
		probes = append(probes, probe{vec: textVec, sameRole: true, sentence: papersearch.MatchedSentence{Index: -1, Role: "query", Text: q.Text}})
	}
	for i, id := range q.Like {
		doc, err := e.store.Get(ctx, id)
		if errors.Is(err, storage.ErrNotFound) {
			return Results{}, missingField(fmt.Sprintf("like/%d", i), fmt.Sprintf("names %q, which is not a paper here", id))
		}
		if err != nil {
			return Results{}, err
		}
		if doc.Sentences == nil {
			if err := e.embedding.Documents(ctx, []*storage.Document{&doc}); err != nil {
				return Results{}, fmt.Errorf("embed the sentences of %s: %w", id, err)
			}
		}
		texts, found := storage.Sentences(doc.Paper), false
		for j, s := range doc.Sentences {
			if s.Role == role && j < len(texts) {
				found = true
				probes = append(probes, probe{vec: e.core(s.Vector), sameRole: e.opts.research.AspectSameRole,
					sentence: papersearch.MatchedSentence{Index: j, Role: s.Role.String(), Text: texts[j]}})
			}
		}
		if !found {
			// No sentence of the aspect: the paper as a whole is the probe,
			// and the response says so (as similar by aspect does).
			wholePaper = true
			probes = append(probes, probe{vec: e.core(doc.Vector), sameRole: e.opts.research.AspectSameRole,
				sentence: papersearch.MatchedSentence{Index: -1, Role: "paper", Text: doc.Paper.Title}})
		}
	}
	// The candidates: the text's nearest papers (a unit vector already), or
	// the Rocchio query of the text and the liked and disliked papers.
	vec := textVec
	if len(q.Like)+len(q.Unlike) > 0 {
		v, err := e.denseQuery(ctx, q)
		if err != nil {
			return Results{}, err
		}
		vec = e.core(v)
	}
	filter := q.Filter
	filter.Exclude = slices.Concat(q.Like, q.Unlike)
	candidates := func(ctx context.Context, depth int) ([]storage.Candidate, error) {
		c, err := e.nearest(ctx, vec, depth, filter)
		if err != nil {
			return nil, fmt.Errorf("dense retrieval: %w", err)
		}
		return c, nil
	}
	res, err := e.rankByAspect(ctx, at, q, aspectProbes{probes: probes, role: role, byRole: true}, candidates)
	if err == nil && wholePaper {
		res.Degraded = append(res.Degraded, "aspect")
	}
	return res, err
}

// aspectDepth is how many candidates an aspect query ranks.
func (e *Engine) aspectDepth() int {
	if e.opts.research.AspectDepth > 0 {
		return e.opts.research.AspectDepth
	}
	return defaultAspectDepth
}

// aspectProbes are what an aspect query matches with candidates'
// sentences: its probes, the role of the aspect, and whether a probe
// matches only sentences of that role (see scoreByAspect).
type aspectProbes struct {
	probes []probe
	role   roles.Role
	byRole bool
}

// rankByAspect ranks the candidates the query's candidates function
// returns (AspectDepth of them; maxSeen for pages past those) by how well
// the probes match their sentences (see similarByAspect), weighed with
// their scores as a whole, and returns the page of q that the ranking
// gives.
func (e *Engine) rankByAspect(ctx context.Context, at pageAt, q Query, ap aspectProbes, candidates func(context.Context, int) ([]storage.Candidate, error)) (Results, error) {
	probes, role, byRole := ap.probes, ap.role, ap.byRole
	details := map[string]aspectScored{} // of the first ranking an id is in
	theirs := map[string][]roles.Role{}
	rankAt := func(ctx context.Context, depth int) ([]Fused, int, error) {
		cands, err := candidates(ctx, depth)
		if err != nil {
			return nil, 0, err
		}
		list, scored, sentenceRoles, err := e.scoreByAspect(ctx, q.Mode, probes, role, byRole, cands)
		if err != nil {
			return nil, 0, err
		}
		for id, x := range scored {
			if _, ok := details[id]; !ok {
				details[id], theirs[id] = x, sentenceRoles[id]
			}
		}
		return list, len(cands), nil
	}
	depth := e.aspectDepth()
	first, n, err := rankAt(ctx, depth)
	if err != nil {
		return Results{}, err
	}
	r := ranking{first: first, more: cut(n, depth) && depth < maxSeen, deeper: func(ctx context.Context) ([]Fused, error) {
		list, _, err := rankAt(ctx, maxSeen)
		return list, err
	}}
	explain := q.Explain
	q.Explain = false
	res, err := e.page(ctx, at, Results{}, r, q, nil)
	if err != nil || !explain {
		return res, err
	}
	for i := range res.Hits {
		h := &res.Hits[i]
		x := details[h.ID]
		h.Explanation = explainRanks(x.Fused)
		m := x.match
		m.Query = probes[x.qi].sentence
		if hs := storage.Sentences(h.Paper); x.ci >= 0 && x.ci < len(hs) {
			m.Result = papersearch.MatchedSentence{Index: x.ci, Role: theirs[h.ID][x.ci].String(), Text: hs[x.ci]}
		} else {
			m.Result = papersearch.MatchedSentence{Index: -1, Role: "paper", Text: h.Paper.Title}
		}
		h.Explanation.SentenceMatch = &m
	}
	return res, nil
}
