package search

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/storage"
)

// SimilarQuery asks for the papers most like one paper.
type SimilarQuery struct {
	ID      string
	Filter  papersearch.Filter
	Mode    Mode
	Limit   int
	Cursor  string
	Explain bool
	// Aspect, if set, compares the paper's sentences of that role with
	// other papers' (see similarByAspect); Sentences, if set, compares
	// exactly those of its sentences (0-based places in the abstract).
	Aspect    Aspect
	Sentences []int
}

// Similar returns the papers closest to the paper with the given id, never
// the paper itself: its stored vector on the dense side and its own text as
// the lexical query, fused as Search does. An unknown id is ErrNotFound.
func (e *Engine) Similar(ctx context.Context, sq SimilarQuery) (Results, error) {
	defer e.embedding.Foreground()()
	start := time.Now()
	// The request is checked before the paper is looked up: a bad parameter
	// is the caller's to fix whether or not the paper exists.
	q := Query{Filter: sq.Filter, Mode: sq.Mode, Limit: sq.Limit, Cursor: sq.Cursor, Explain: sq.Explain}
	if err := q.validateShape(); err != nil {
		return Results{}, err
	}
	byAspect := sq.Aspect != WholePaper || sq.Sentences != nil
	if byAspect {
		if err := sq.validateAspect(); err != nil {
			return Results{}, err
		}
	}
	// The paper may be known by another id (a source of a work stored
	// under its first version's id): resolved once, here, so that every
	// page of the query, and its cursor, name the work.
	doc, err := e.document(ctx, sq.ID)
	if err != nil {
		return Results{}, err
	}
	sq.ID = doc.Paper.ID
	if byAspect {
		return e.similarByAspect(ctx, start, sq, q, doc)
	}
	fp := Query{Text: sq.ID, Filter: sq.Filter, Mode: q.Mode}.fingerprint("similar")
	at, err := e.at(start, sq.Cursor, fp)
	if err != nil {
		return Results{}, err
	}
	filter := sq.Filter
	filter.Exclude = []string{sq.ID}
	// The dense side searches from the paper's own vector, as the gate's
	// core models see it, while its text is the lexical side's query.
	vec := e.core(doc.Vector)
	denseAt := func(ctx context.Context, depth int) ([]storage.Candidate, error) {
		if q.Mode == Lexical {
			return nil, nil
		}
		c, err := e.nearest(ctx, vec, depth, filter)
		if err != nil {
			return c, fmt.Errorf("dense retrieval: %w", err)
		}
		return c, nil
	}
	q.Text = doc.Paper.Text()
	terms := doc.Terms
	if terms == nil {
		terms = lexical.Analyze(q.Text)
	}
	lexAt := func(ctx context.Context, depth int) (storage.Matches, error) {
		if q.Mode == Dense {
			return storage.Matches{}, nil
		}
		return e.lexical(ctx, terms, depth, filter)
	}
	var dense []storage.Candidate
	var lexMatches storage.Matches
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { dense, err = denseAt(gctx, CandidateDepth); return err })
	g.Go(func() (err error) { lexMatches, err = lexAt(gctx, CandidateDepth); return err })
	if err := g.Wait(); err != nil {
		return Results{}, err
	}
	return e.page(ctx, at, Results{}, e.fusedRanking(q.Mode, dense, lexMatches, denseAt, lexAt), q, vec)
}
