package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/storage"
)

// FeatureDepth is how many of a free-text query's fused candidates have
// their CandidateFeatures measured.
const FeatureDepth = 50

// CandidateFeatures are what a second stage, re-scoring a free-text query's first
// candidates, could know of one of them (eval --features writes them for
// scripts/train_ranker.py; docs/ranking.md has what a linear model over
// them gained): its place and score in each retrieval and after
// fusion, how well its best sentence matches, and how much of the query's
// informative vocabulary its title and abstract hold.
type CandidateFeatures struct {
	ID    string  `json:"id"`
	Fused float64 `json:"fused"` // the first stage's fused score
	// Dense is the cosine similarity of the paper's vector to the query's;
	// for a paper outside the dense list, the list's lowest (an upper
	// bound). DenseGap is the list's best cosine minus Dense.
	Dense    float64 `json:"dense"`
	DenseGap float64 `json:"dense_gap"`
	// Lexical is the BM25 score over the query's ideal score (0 outside
	// the lexical list); Evidence is the query's evidence (the best
	// Lexical, at most 1).
	Lexical  float64 `json:"lexical"`
	Evidence float64 `json:"evidence"`
	// DenseRank and LexicalRank are 1-based places in each list, 0 when
	// the paper is not in it.
	DenseRank   int `json:"dense_rank"`
	LexicalRank int `json:"lexical_rank"`
	// Sentence is the best cosine similarity of one of the abstract's
	// sentence vectors to the query vector (Dense when none is kept).
	Sentence float64 `json:"sentence"`
	// Parts, for several models, are each model's own cosine similarity
	// (the list's lowest outside its top CandidateDepth) and PartRanks
	// the paper's 1-based place by it (0 outside); PartSentences each
	// model's best sentence cosine.
	Parts         []float64 `json:"parts,omitempty"`
	PartRanks     []int     `json:"part_ranks,omitempty"`
	PartSentences []float64 `json:"part_sentences,omitempty"`
	// Coverage and TitleCoverage are the shares of the query's ideal
	// score carried by the query terms the paper's text and its title
	// hold (each term's query tf × idf, counted once).
	Coverage      float64 `json:"coverage"`
	TitleCoverage float64 `json:"title_coverage"`
	// Pairs is the share of the query's pairs of adjacent terms that occur
	// adjacent in the paper's text: phrases kept.
	Pairs float64 `json:"pairs"`
}

// FeatureNames name the values of CandidateFeatures.Vector for a model of parts
// models (1 for a single model), in order.
func FeatureNames(parts int) []string {
	names := []string{"fused", "dense", "dense_gap", "lexical", "lexical_x_evidence", "dense_x_evidence",
		"dense_rr", "lexical_rr", "in_lexical", "sentence", "sentence_gain",
		"coverage", "title_coverage", "pairs", "coverage_x_evidence"}
	if parts > 1 {
		for i := range parts {
			names = append(names, fmt.Sprintf("part%d", i+1), fmt.Sprintf("part%d_rr", i+1), fmt.Sprintf("part%d_sentence", i+1))
		}
	}
	return names
}

// Vector is what a second stage's model reads of f: its features and
// some of their products with the query's evidence, reciprocal ranks (0
// outside a list), and each model's own figures. See FeatureNames.
func (f CandidateFeatures) Vector() []float64 {
	rr := func(rank int) float64 {
		if rank > 0 {
			return 1 / float64(rank)
		}
		return 0
	}
	inLexical := 0.0
	if f.LexicalRank > 0 {
		inLexical = 1
	}
	ev := f.Evidence
	v := []float64{f.Fused, f.Dense, f.DenseGap, f.Lexical, f.Lexical * ev, f.Dense * ev,
		rr(f.DenseRank), rr(f.LexicalRank), inLexical, f.Sentence, f.Sentence - f.Dense,
		f.Coverage, f.TitleCoverage, f.Pairs, f.Coverage * ev}
	for i := range f.Parts {
		v = append(v, f.Parts[i], rr(f.PartRanks[i]), f.PartSentences[i])
	}
	return v
}

// features computes the CandidateFeatures of the first n fused candidates of the
// free-text query whose retrievals rv holds.
func features(ctx context.Context, e *search.Engine, rv search.Retrieved, n int) ([]CandidateFeatures, error) {
	ranked, terms, queryVec, dense, lex, filter := rv.Fused, rv.Terms, rv.Vector, rv.Dense, rv.Lexical, rv.Filter
	pool := ranked[:min(n, len(ranked))]
	ids := make([]string, len(pool))
	for i, x := range pool {
		ids[i] = x.ID
	}
	papers, err := e.Store().Lookup(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("features: %w", err)
	}
	sentences, err := e.Store().Sentences(ctx, ids)
	if err != nil && !errors.Is(err, storage.ErrNoSentences) {
		return nil, fmt.Errorf("features: %w", err)
	}
	weight := make(map[string]float64, len(lex.Terms))
	for _, t := range lex.Terms {
		weight[t.Term] = t.Weight
	}
	var pairs [][2]string
	for i := 1; i < len(terms); i++ {
		if weight[terms[i-1]] > 0 && weight[terms[i]] > 0 && terms[i-1] != terms[i] {
			pairs = append(pairs, [2]string{terms[i-1], terms[i]})
		}
	}
	var best, lowest float64
	if len(dense) > 0 {
		best, lowest = float64(dense[0].Score), float64(dense[len(dense)-1].Score)
	}
	evidence := rv.Evidence
	parts, err := partLists(ctx, e, queryVec, filter)
	if err != nil {
		return nil, fmt.Errorf("features: %w", err)
	}
	out := make([]CandidateFeatures, len(pool))
	for i, x := range pool {
		f := CandidateFeatures{ID: x.ID, Fused: x.Score, DenseRank: x.DenseRank, LexicalRank: x.LexicalRank, Evidence: evidence}
		f.Dense = lowest
		if x.DenseRank > 0 {
			f.Dense = float64(x.DenseScore)
		}
		f.DenseGap = best - f.Dense
		if x.LexicalRank > 0 && lex.Ideal > 0 {
			f.Lexical = float64(x.LexicalScore) / lex.Ideal
		}
		f.Sentence = f.Dense
		for _, s := range sentences[x.ID] {
			if len(s.Vector) == len(queryVec) {
				f.Sentence = math.Max(f.Sentence, float64(embed.Dot(s.Vector, queryVec)))
			}
		}
		for _, pl := range parts {
			score, rank := pl.lowest, 0
			if r, ok := pl.rank[x.ID]; ok {
				score, rank = pl.score[x.ID], r
			}
			f.Parts = append(f.Parts, score)
			f.PartRanks = append(f.PartRanks, rank)
			best := score
			for _, s := range sentences[x.ID] {
				if len(s.Vector) == len(queryVec) {
					best = math.Max(best, pl.cosine(s.Vector))
				}
			}
			f.PartSentences = append(f.PartSentences, best)
		}
		if p, ok := papers[x.ID]; ok && lex.Ideal > 0 {
			f.Coverage, f.TitleCoverage, f.Pairs = coverage(p, weight, pairs, lex.Ideal)
		}
		out[i] = f
	}
	return out, nil
}

// partList is one model's ranking of a Pair's vectors: the nearest by
// that model's part alone.
type partList struct {
	from, to int       // the model's dimensions in the pair's vector
	query    []float32 // the query's half, unit length, zero elsewhere
	scale    float64   // √n: a Pair vector's part has length 1/√n
	score    map[string]float64
	rank     map[string]int
	lowest   float64
}

// cosine is the model's cosine similarity of a Pair vector v to the
// query.
func (p partList) cosine(v []float32) float64 {
	return p.scale * float64(embed.Dot(p.query[p.from:p.to], v[p.from:p.to]))
}

// partLists ranks by each model of a Pair alone, nil for one model: a
// Pair's vector holds each of its n models' unit vectors scaled by 1/√n,
// so the query's part alone (the rest zero) ranks by that model's cosine.
func partLists(ctx context.Context, e *search.Engine, queryVec []float32, filter papersearch.Filter) ([]partList, error) {
	models := e.Models()
	if len(models) < 3 {
		return nil, nil
	}
	scale := math.Sqrt(float64(len(models) - 1))
	var out []partList
	from := 0
	for _, m := range models[1:] {
		to := from + m.Dim
		if to > len(queryVec) {
			return nil, nil
		}
		q := make([]float32, len(queryVec))
		copy(q[from:to], queryVec[from:to])
		embed.Normalize(q)
		list, err := e.Store().Nearest(ctx, q, search.CandidateDepth, filter)
		if err != nil {
			return nil, err
		}
		pl := partList{from: from, to: to, query: q, scale: scale, score: map[string]float64{}, rank: map[string]int{}}
		for i, c := range list {
			pl.score[c.ID], pl.rank[c.ID] = scale*float64(c.Score), i+1
		}
		if len(list) > 0 {
			pl.lowest = scale * float64(list[len(list)-1].Score)
		}
		out = append(out, pl)
		from = to
	}
	return out, nil
}

// coverage returns the shares of ideal carried by the weighted query
// terms p's text and its title hold, and the share of pairs found
// adjacent in its text.
func coverage(p papersearch.Paper, weight map[string]float64, pairs [][2]string, ideal float64) (text, title, adjacent float64) {
	terms := lexical.Analyze(p.Text())
	held := map[string]bool{}
	next := map[[2]string]bool{}
	for i, t := range terms {
		held[t] = true
		if i > 0 {
			next[[2]string{terms[i-1], t}] = true
		}
	}
	inTitle := map[string]bool{}
	for _, t := range lexical.Analyze(p.Title) {
		inTitle[t] = true
	}
	// Sum in a fixed order: the same query scores the same every time.
	keys := make([]string, 0, len(weight))
	for t := range weight {
		keys = append(keys, t)
	}
	slices.Sort(keys)
	for _, t := range keys {
		if held[t] {
			text += weight[t]
		}
		if inTitle[t] {
			title += weight[t]
		}
	}
	for _, pr := range pairs {
		if next[pr] {
			adjacent++
		}
	}
	if len(pairs) > 0 {
		adjacent /= float64(len(pairs))
	}
	return text / ideal, title / ideal, adjacent
}

// candidateFeatures is the CandidateFeatures of a free-text question's first
// FeatureDepth fused candidates in hybrid mode, as a second stage would
// re-score them; none when one side found nothing.
func candidateFeatures(ctx context.Context, e *search.Engine, text string) ([]CandidateFeatures, error) {
	rv, err := e.Retrieve(ctx, text)
	if err != nil || rv.Fused == nil {
		return nil, err
	}
	return features(ctx, e, rv, FeatureDepth)
}
