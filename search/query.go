package search

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/storage"
)

// Mode selects the retrievals a query uses.
type Mode string

const (
	Hybrid  Mode = "hybrid"  // dense and lexical, fused (the default)
	Dense   Mode = "dense"   // embedding similarity only
	Lexical Mode = "lexical" // BM25 only
)

// Query is a search: free text, example papers, or both.
type Query struct {
	// Text is the question, in plain words. It may be empty when Like
	// names papers.
	Text string
	// Like and Unlike are paper ids: the dense side moves the query toward
	// the liked papers and away from the disliked ones (a paper in both is
	// liked). They never come back as results themselves.
	Like, Unlike []string
	Filter       papersearch.Filter
	Mode         Mode // "" means Hybrid
	Limit        int  // 1..MaxLimit; 0 means DefaultLimit
	// Cursor continues from the page that returned it.
	Cursor  string
	Explain bool
	// Aspect, if set, ranks by sentences of that role: the liked papers'
	// sentences of the role and the text, matched with the candidates'
	// sentences (see searchByAspect).
	Aspect Aspect
}

// Results is a ranked page of hits.
type Results struct {
	Hits []papersearch.Hit
	// NextCursor continues to the next page; "" on the last.
	NextCursor string
	// Degraded names the retrievals that failed, so results come from the
	// others: "dense" when the query could not be embedded.
	Degraded []string
	// Evidence, for a free-text search with a lexical side, is how much of
	// the query's ideal BM25 score its best lexical match reaches, in
	// [0, 1] (what hybrid fusion weighs the lexical side by): near 0 when
	// no paper holds the query's informative words (a nonsense query, or
	// one that paraphrases every word), so the results are only the
	// nearest by meaning; nil otherwise, and when the ranking is empty (no
	// paper within the query's filters, or in lexical mode none holding its
	// words: nothing to weigh). Under ModelGate.Below every model
	// of a store of several compares the question.
	Evidence *float64
	Index    papersearch.IndexInfo
	Took     time.Duration
}

// Search answers a query: dense and lexical retrieval inside the filter,
// fused, one page at a time.
func (e *Engine) Search(ctx context.Context, q Query) (Results, error) {
	defer e.embedding.Foreground()()
	start := time.Now()
	if err := q.validate(); err != nil {
		return Results{}, err
	}
	// A liked paper may be named by a source id (see Get).
	var err error
	if q.Like, err = e.Resolve(ctx, q.Like); err != nil {
		return Results{}, err
	}
	if q.Unlike, err = e.Resolve(ctx, q.Unlike); err != nil {
		return Results{}, err
	}
	// A paper named both ways is liked: the later, stronger signal of a
	// client that added it to like without taking it out of unlike.
	q.Unlike = slices.DeleteFunc(slices.Clone(q.Unlike), func(id string) bool { return slices.Contains(q.Like, id) })
	if q.Aspect != WholePaper {
		return e.searchByAspect(ctx, start, q)
	}
	return e.searchWhole(ctx, start, q)
}

// searchWhole answers the page of a validated query q that compares whole
// papers: its retrievals, fused, cut at its cursor.
func (e *Engine) searchWhole(ctx context.Context, start time.Time, q Query) (Results, error) {
	at, err := e.at(start, q.Cursor, q.fingerprint("search"))
	if err != nil {
		return Results{}, err
	}
	rt, r, err := e.retrieve(ctx, q, false)
	if err != nil {
		return Results{}, err
	}
	res := Results{Degraded: rt.degraded}
	if q.Mode != Dense && strings.TrimSpace(q.Text) != "" && len(r.first) > 0 {
		ev := evidenceOf(rt.lex)
		res.Evidence = &ev
	}
	return e.page(ctx, at, res, r, q, rt.queryVec)
}

// retrieve runs a validated whole-paper query's first retrievals and
// fuses them; allModels embeds its text by every model, even those the
// model gate leaves out.
func (e *Engine) retrieve(ctx context.Context, q Query, allModels bool) (*retrieval, ranking, error) {
	filter := q.Filter
	filter.Exclude = slices.Concat(q.Like, q.Unlike)
	rt := &retrieval{e: e, mode: q.Mode, terms: lexical.Analyze(q.Text), filter: filter, needAll: allModels}
	if err := rt.run(ctx, q); err != nil {
		return nil, ranking{}, err
	}
	return rt, e.fusedRanking(q.Mode, rt.dense, rt.lex, rt.denseAt, rt.lexAt), nil
}

// retrieval is one query's first retrievals at CandidateDepth, and how to
// repeat them at any depth.
type retrieval struct {
	e      *Engine
	mode   Mode
	terms  []string
	filter papersearch.Filter
	// needAll asks for allModels even when the gate leaves models out.
	needAll bool

	dense []storage.Candidate
	lex   storage.Matches
	// queryVec is the dense query as the store is asked it; allModels,
	// over all of a store's models (see ModelGate), before the gate: only
	// the core models' parts when the gate left the others out and
	// needAll was not set.
	queryVec, allModels []float32
	degraded            []string
}

// lexAt is the lexical retrieval at depth; none in dense mode.
func (rt *retrieval) lexAt(ctx context.Context, depth int) (storage.Matches, error) {
	if rt.mode == Dense || len(rt.terms) == 0 {
		return storage.Matches{}, nil
	}
	return rt.e.lexical(ctx, rt.terms, depth, rt.filter)
}

// denseAt is the dense retrieval at depth; none without a query vector.
func (rt *retrieval) denseAt(ctx context.Context, depth int) ([]storage.Candidate, error) {
	if rt.queryVec == nil {
		return nil, nil
	}
	c, err := rt.e.nearest(ctx, rt.queryVec, depth, rt.filter)
	if err != nil {
		return c, fmt.Errorf("dense retrieval: %w", err)
	}
	return c, nil
}

// run retrieves q's candidates. The lexical side runs while the query is
// embedded. Its evidence decides, in a store of more models than the
// gate's core, which of them the dense side compares by, so there the
// dense search waits for it (a dense-mode query asks for the best lexical
// match alone); a question of text alone is embedded by the core models
// at once and by the others only once its evidence says they compare it,
// while the core ones run. A hybrid query whose embedding fails is
// answered from its lexical side, marked degraded.
func (rt *retrieval) run(ctx context.Context, q Query) error {
	e := rt.e
	later := e.gated() && !rt.needAll && q.Mode != Lexical &&
		strings.TrimSpace(q.Text) != "" && len(q.Like)+len(q.Unlike) == 0
	var rest []float32         // the other models' parts, when they compare it
	var restErr error          // their embedding failed
	var coreFailed atomic.Bool // the core models' embedding failed: no rest is wanted
	noEvidence := false        // a dense query's evidence lookup failed
	lexDone := make(chan error, 1)
	go func() {
		var err error
		switch {
		case q.Mode != Dense:
			rt.lex, err = rt.lexAt(ctx, CandidateDepth)
		case e.gated() && len(rt.terms) > 0:
			// Only the evidence is wanted: without it the core models
			// compare the question, as they would with strong evidence.
			if rt.lex, err = e.lexical(ctx, rt.terms, 1, rt.filter); err != nil && ctx.Err() == nil {
				e.log.Warn("dense search: no lexical evidence to choose the models by; comparing by the core models", "error", err)
				noEvidence, err = true, nil
			}
		}
		if err == nil && later && !noEvidence && e.weak(evidenceOf(rt.lex)) && !coreFailed.Load() {
			rest, restErr = e.embedding.QueryModels(ctx, q.Text, e.opts.ModelGate.Core, e.models)
		}
		lexDone <- err
	}()
	waitLex := sync.OnceValue(func() error { return <-lexDone })
	var err error
	if q.Mode != Lexical {
		if later {
			rt.queryVec, err = e.embedding.QueryModels(ctx, q.Text, 0, e.opts.ModelGate.Core)
			coreFailed.Store(err != nil)
		} else {
			rt.queryVec, err = e.denseQuery(ctx, q)
		}
		switch {
		case errors.Is(err, storage.ErrNotFound) || errors.Is(err, ErrInvalidQuery):
		case err != nil && ctx.Err() != nil:
		case err != nil && q.Mode == Hybrid && len(rt.terms) > 0:
			level := slog.LevelWarn
			if errors.Is(err, storage.ErrUnavailable) { // the breaker said so once already
				level = slog.LevelDebug
			}
			e.log.Log(ctx, level, "dense retrieval unavailable; answering from lexical retrieval alone", "error", err)
			rt.degraded = append(rt.degraded, "dense")
			rt.queryVec, err = nil, nil
		case err != nil:
		default:
			rt.allModels = rt.queryVec
			if e.gated() {
				if err = waitLex(); err != nil {
					break
				}
				switch {
				case rest != nil: // every model: Query's vector, normalised as denseQuery does
					v := slices.Clone(rt.queryVec)
					for i, x := range rest {
						v[i] += x
					}
					embed.Normalize(v)
					rt.queryVec, rt.allModels = v, v
				case restErr != nil && ctx.Err() != nil:
					err = restErr
				case restErr != nil:
					e.log.Warn("search: the models past the gate's core failed to embed a weakly evidenced question; comparing by the core models", "error", restErr)
					fallthrough
				case later || strings.TrimSpace(q.Text) == "" || noEvidence || !e.weak(evidenceOf(rt.lex)):
					rt.queryVec = e.core(rt.queryVec)
				}
				if err != nil {
					break
				}
			}
			rt.dense, err = rt.denseAt(ctx, CandidateDepth)
		}
	}
	if lexErr := waitLex(); err == nil {
		err = lexErr
	}
	return err
}

// lexical is the store's BM25 retrieval, its errors named as such.
func (e *Engine) lexical(ctx context.Context, terms []string, depth int, filter papersearch.Filter) (storage.Matches, error) {
	m, err := e.store.Lexical(ctx, terms, depth, filter)
	if err != nil {
		return m, fmt.Errorf("lexical retrieval: %w", err)
	}
	return m, nil
}

// fusedRanking is the ranking of a query in mode whose retrievals at
// CandidateDepth returned dense and lex, and which denseAt and lexAt
// repeat at any depth.
func (e *Engine) fusedRanking(mode Mode, dense []storage.Candidate, lex storage.Matches,
	denseAt func(context.Context, int) ([]storage.Candidate, error), lexAt func(context.Context, int) (storage.Matches, error)) ranking {
	f := *e.opts.Fusion
	return ranking{
		first: merge(mode, dense, lex, f),
		more:  cut(len(dense), CandidateDepth) || cut(len(lex.Candidates), CandidateDepth),
		deeper: func(ctx context.Context) ([]Fused, error) {
			var (
				dense []storage.Candidate
				lex   storage.Matches
			)
			g, gctx := errgroup.WithContext(ctx)
			g.Go(func() (err error) { dense, err = denseAt(gctx, maxSeen); return err })
			g.Go(func() (err error) { lex, err = lexAt(gctx, maxSeen); return err })
			if err := g.Wait(); err != nil {
				return nil, err
			}
			return merge(mode, dense, lex, f), nil
		},
	}
}

// merge returns the ranking of a query in mode: the dense list, the
// lexical one, or both fused under f (one alone when the other is empty).
func merge(mode Mode, dense []storage.Candidate, lex storage.Matches, f Fusion) []Fused {
	switch {
	case mode == Dense || len(lex.Candidates) == 0 && len(dense) > 0:
		return single(dense, true)
	case mode == Lexical || len(dense) == 0:
		return single(lex.Candidates, false)
	}
	return fuse(dense, lex, f)
}

// denseQuery builds the dense query vector: the embedded text, moved toward
// liked and away from disliked papers (Rocchio: 1·query + 0.75·mean(liked) −
// 0.25·mean(disliked)), then normalised.
func (e *Engine) denseQuery(ctx context.Context, q Query) ([]float32, error) {
	dim := e.store.Model().Dim
	v := make([]float32, dim)
	if strings.TrimSpace(q.Text) != "" {
		qv, err := e.embedding.Query(ctx, q.Text)
		if err != nil {
			return nil, err
		}
		copy(v, qv)
	}
	for _, side := range []struct {
		field  string
		ids    []string
		weight float32
	}{{"like", q.Like, 0.75}, {"unlike", q.Unlike, -0.25}} {
		if len(side.ids) == 0 {
			continue
		}
		w := side.weight / float32(len(side.ids))
		if strings.TrimSpace(q.Text) == "" && side.field == "like" {
			w = 1 / float32(len(side.ids))
		}
		for i, id := range side.ids {
			doc, err := e.store.Get(ctx, id)
			if errors.Is(err, storage.ErrNotFound) {
				return nil, missingField(fmt.Sprintf("%s/%d", side.field, i), fmt.Sprintf("names %q, which is not a paper here", id))
			}
			if err != nil {
				return nil, err
			}
			for i, x := range doc.Vector {
				v[i] += w * x
			}
		}
	}
	embed.Normalize(v)
	return v, nil
}

// nearest is Store.Nearest for any query vector v, unit or made by core:
// the store is asked with v's direction, and the scores are v's dot
// products with the papers' vectors.
func (e *Engine) nearest(ctx context.Context, v []float32, k int, f papersearch.Filter) ([]storage.Candidate, error) {
	found, err := e.nearestMany(ctx, [][]float32{v}, []int{k}, f)
	if err != nil {
		return nil, err
	}
	return found[0], nil
}

// nearestMany is nearest for several query vectors, in one pass when the
// store can (ManyNearest; storage.Observed asks one by one otherwise).
func (e *Engine) nearestMany(ctx context.Context, vs [][]float32, ks []int, f papersearch.Filter) ([][]storage.Candidate, error) {
	units := make([][]float32, len(vs))
	norms := make([]float64, len(vs))
	for i, v := range vs {
		norms[i] = math.Sqrt(float64(embed.Dot(v, v)))
		units[i] = v
		if math.Abs(norms[i]-1) >= 1e-4 && norms[i] != 0 {
			units[i] = make([]float32, len(v))
			for j, x := range v {
				units[i][j] = float32(float64(x) / norms[i])
			}
		}
	}
	found, err := e.store.NearestMany(ctx, units, ks, f)
	if err != nil {
		return nil, err
	}
	for i, c := range found {
		if math.Abs(norms[i]-1) >= 1e-4 && norms[i] != 0 {
			for j := range c {
				c[j].Score = float32(float64(c[j].Score) * norms[i])
			}
		}
	}
	return found, nil
}
