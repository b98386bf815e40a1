package search

import (
	"context"
	"errors"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/storage"
)

// observedStore reports the latency and outcome of the store operations on
// the query and ingest paths, and notes in writes the papers each write
// changed (what the map has not placed yet).
type observedStore struct {
	storage.Store
	observe func(op string, d time.Duration, err error)
	writes  *Changes
}

func (s observedStore) Nearest(ctx context.Context, v []float32, k int, f papersearch.Filter) ([]storage.Candidate, error) {
	start := time.Now()
	c, err := s.Store.Nearest(ctx, v, k, f)
	s.observe(OpNearest, time.Since(start), err)
	return c, err
}

// NearestMany answers in one pass when the store can (ManyNearest), else
// query by query; each is observed as one Nearest.
func (s observedStore) NearestMany(ctx context.Context, vs [][]float32, ks []int, f papersearch.Filter) ([][]storage.Candidate, error) {
	many, ok := s.Store.(storage.ManyNearest)
	if !ok {
		out := make([][]storage.Candidate, len(vs))
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
	s.observe(OpNearest, time.Since(start), err)
	return c, err
}

func (s observedStore) Lexical(ctx context.Context, terms []string, k int, f papersearch.Filter) (storage.Matches, error) {
	start := time.Now()
	c, err := s.Store.Lexical(ctx, terms, k, f)
	s.observe(OpLexical, time.Since(start), err)
	return c, err
}

func (s observedStore) Lookup(ctx context.Context, ids []string) (map[string]papersearch.Paper, error) {
	start := time.Now()
	p, err := s.Store.Lookup(ctx, ids)
	s.observe(OpLookup, time.Since(start), err)
	return p, err
}

func (s observedStore) Get(ctx context.Context, id string) (storage.Document, error) {
	start := time.Now()
	d, err := s.Store.Get(ctx, id)
	if errors.Is(err, storage.ErrNotFound) {
		s.observe(OpGet, time.Since(start), nil) // an answer, not a failure
	} else {
		s.observe(OpGet, time.Since(start), err)
	}
	return d, err
}

func (s observedStore) Upsert(ctx context.Context, docs []storage.Document) error {
	start := time.Now()
	err := s.Store.Upsert(ctx, docs)
	s.observe(OpUpsert, time.Since(start), err)
	if err == nil {
		ids := make([]string, len(docs))
		for i, d := range docs {
			ids[i] = d.Paper.ID
		}
		s.writes.note(ids, false)
	}
	return err
}

func (s observedStore) Delete(ctx context.Context, id string) error {
	err := s.Store.Delete(ctx, id)
	if err == nil {
		s.writes.note([]string{id}, true)
	}
	return err
}

func (s observedStore) Count(ctx context.Context) (int, error) {
	start := time.Now()
	n, err := s.Store.Count(ctx)
	s.observe(OpCount, time.Since(start), err)
	return n, err
}
