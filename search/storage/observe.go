package storage

import (
	"context"
	"errors"
	"time"

	"github.com/papersearch/papersearch"
)

// The store operations an Observed store reports.
const (
	OpNearest = "nearest"
	OpLexical = "lexical"
	OpLookup  = "lookup"
	OpGet     = "get"
	OpUpsert  = "upsert"
	OpCount   = "count"
)

// Ops lists every operation an Observed store reports, so metrics can
// show each one from the start.
func Ops() []string { return []string{OpNearest, OpLexical, OpLookup, OpGet, OpUpsert, OpCount} }

// Observed is a Store that reports the latency and outcome of its reads
// and upserts to observe (if not nil), named by one of Ops, and notes in
// Changes the papers each upsert or delete through it changed (a delete
// is noted, not timed). The engine serves through one; the catalog writes
// through the same, so that what was made from a snapshot of the store
// (the corpus map) learns what changed since.
type Observed struct {
	Store
	observe func(op string, d time.Duration, err error)
	changes Changes
}

// Observe returns s observed.
func Observe(s Store, observe func(op string, d time.Duration, err error)) *Observed {
	return &Observed{Store: s, observe: observe}
}

// Changes are the papers written and deleted through s since a point.
func (s *Observed) Changes() *Changes { return &s.changes }

// done reports an operation begun at start.
func (s *Observed) done(op string, start time.Time, err error) {
	if s.observe != nil {
		s.observe(op, time.Since(start), err)
	}
}

// Nearest is the store's Nearest, observed as OpNearest.
func (s *Observed) Nearest(ctx context.Context, v []float32, k int, f papersearch.Filter) ([]Candidate, error) {
	start := time.Now()
	c, err := s.Store.Nearest(ctx, v, k, f)
	s.done(OpNearest, start, err)
	return c, err
}

// NearestMany answers in one pass when the store can (ManyNearest), else
// query by query; each is observed as one Nearest.
func (s *Observed) NearestMany(ctx context.Context, vs [][]float32, ks []int, f papersearch.Filter) ([][]Candidate, error) {
	many, ok := s.Store.(ManyNearest)
	if !ok {
		out := make([][]Candidate, len(vs))
		for i, v := range vs {
			var err error
			if out[i], err = s.Nearest(ctx, v, ks[i], f); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	start := time.Now()
	c, err := many.NearestMany(ctx, vs, ks, f)
	s.done(OpNearest, start, err)
	return c, err
}

// VisitSentences visits in buffers reused when the store can
// (SentenceVisitor), else each of its Sentences in turn.
func (s *Observed) VisitSentences(ctx context.Context, ids []string, visit func(id string, ss []Sentence)) error {
	if v, ok := s.Store.(SentenceVisitor); ok {
		return v.VisitSentences(ctx, ids, visit)
	}
	all, err := s.Store.Sentences(ctx, ids)
	if err != nil {
		return err
	}
	for id, ss := range all {
		visit(id, ss)
	}
	return nil
}

// Titles reads the titles of ids alone when the store can (TitleReader),
// else from the papers Lookup returns; observed as OpLookup.
func (s *Observed) Titles(ctx context.Context, ids []string) (map[string]string, error) {
	start := time.Now()
	var titles map[string]string
	var err error
	if r, ok := s.Store.(TitleReader); ok {
		titles, err = r.Titles(ctx, ids)
	} else {
		var papers map[string]papersearch.Paper
		if papers, err = s.Store.Lookup(ctx, ids); err == nil {
			titles = make(map[string]string, len(papers))
			for id, p := range papers {
				titles[id] = p.Title
			}
		}
	}
	s.done(OpLookup, start, err)
	return titles, err
}

// Lexical is the store's Lexical, observed as OpLexical.
func (s *Observed) Lexical(ctx context.Context, terms []string, k int, f papersearch.Filter) (Matches, error) {
	start := time.Now()
	c, err := s.Store.Lexical(ctx, terms, k, f)
	s.done(OpLexical, start, err)
	return c, err
}

// Lookup is the store's Lookup, observed as OpLookup.
func (s *Observed) Lookup(ctx context.Context, ids []string) (map[string]papersearch.Paper, error) {
	start := time.Now()
	p, err := s.Store.Lookup(ctx, ids)
	s.done(OpLookup, start, err)
	return p, err
}

// Get is the store's Get, observed as OpGet; a paper not found is an
// answer, not a failure.
func (s *Observed) Get(ctx context.Context, id string) (Document, error) {
	start := time.Now()
	d, err := s.Store.Get(ctx, id)
	if errors.Is(err, ErrNotFound) {
		s.done(OpGet, start, nil) // an answer, not a failure
	} else {
		s.done(OpGet, start, err)
	}
	return d, err
}

// Upsert is the store's Upsert, observed as OpUpsert; the papers it
// stored are noted in Changes.
func (s *Observed) Upsert(ctx context.Context, docs []Document) error {
	start := time.Now()
	err := s.Store.Upsert(ctx, docs)
	s.done(OpUpsert, start, err)
	if err == nil {
		ids := make([]string, len(docs))
		for i, d := range docs {
			ids[i] = d.Paper.ID
		}
		s.changes.note(ids, false)
	}
	return err
}

// Delete is the store's Delete; the paper it removed is noted in
// Changes.
func (s *Observed) Delete(ctx context.Context, id string) error {
	err := s.Store.Delete(ctx, id)
	if err == nil {
		s.changes.note([]string{id}, true)
	}
	return err
}

// Count is the store's Count, observed as OpCount.
func (s *Observed) Count(ctx context.Context) (int, error) {
	start := time.Now()
	n, err := s.Store.Count(ctx)
	s.done(OpCount, start, err)
	return n, err
}
