package qdrant

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"strings"

	qc "github.com/qdrant/go-client/qdrant"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/storage"
)

// sparseTerm maps an analysed term to its sparse vector index.
func sparseTerm(term string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(term))
	return h.Sum32()
}

// sparseBM25 is a document's BM25 term weights (without IDF, which Qdrant
// applies) as a sparse vector. The caller holds q.lexMu.
func (q *Store) sparseBM25(terms []string) *qc.Vector {
	counts := lexical.TermCounts(terms)
	idx := make([]uint32, 0, len(counts))
	val := make([]float32, 0, len(counts))
	for t, tf := range counts {
		idx = append(idx, sparseTerm(t))
		val = append(val, float32(lexical.TFWeight(tf, len(terms), q.avgdl)))
	}
	return qc.NewVectorSparse(idx, val)
}

// filterOf translates a Filter into Qdrant conditions.
func filterOf(f papersearch.Filter) *qc.Filter {
	if storage.FieldsFree(f) && len(f.Exclude) == 0 && len(f.Only) == 0 {
		return nil
	}
	var must, mustNot []*qc.Condition
	if f.YearMin != 0 || f.YearMax != 0 {
		r := &qc.Range{}
		if f.YearMin != 0 {
			r.Gte = qc.PtrOf(float64(f.YearMin))
		}
		if f.YearMax != 0 {
			r.Lte = qc.PtrOf(float64(f.YearMax))
		}
		must = append(must, qc.NewRange(fieldYear, r))
	}
	if len(f.Venues) > 0 {
		keys := make([]string, len(f.Venues))
		for i, v := range f.Venues {
			keys[i] = storage.VenueKey(v)
		}
		must = append(must, qc.NewMatchKeywords(fieldVenueKey, keys...))
	}
	if len(f.Tags) > 0 {
		must = append(must, qc.NewMatchKeywords(fieldTags, storage.TagKeys(f.Tags)...))
	}
	if words := storage.AuthorWords(f.Author); len(words) > 0 {
		must = append(must, qc.NewMatchText(fieldAuthorNames, strings.Join(words, " ")))
	}
	if by, lo, hi, ok := storage.DateRange(f); ok {
		must = append(must, dateConditions(by, lo, hi)...)
	}
	pointIDs := func(ids []string) []*qc.PointId {
		pids := make([]*qc.PointId, len(ids))
		for i, id := range ids {
			pids[i] = pointID(id)
		}
		return pids
	}
	if len(f.Only) > 0 {
		must = append(must, qc.NewHasID(pointIDs(f.Only)...))
	}
	if len(f.Exclude) > 0 {
		mustNot = append(mustNot, qc.NewHasID(pointIDs(f.Exclude)...))
	}
	return &qc.Filter{Must: must, MustNot: mustNot}
}

// dateConditions are the conditions of a range from storage.DateRange, as
// storage.InDateRange reads it: a paper's last day on or after lo and its
// first on or before hi, or when it was added within them. A point
// without the field (a paper with no date and no year) matches no range.
func dateConditions(by papersearch.DateBy, lo, hi int64) []*qc.Condition {
	atLeast := func(field string, v int64) *qc.Condition {
		return qc.NewRange(field, &qc.Range{Gte: qc.PtrOf(float64(v))})
	}
	atMost := func(field string, v int64) *qc.Condition {
		return qc.NewRange(field, &qc.Range{Lte: qc.PtrOf(float64(v))})
	}
	first, last := fieldDayFirst, fieldDayLast
	if by == papersearch.ByAdded {
		first, last = fieldAdded, fieldAdded
	}
	var out []*qc.Condition
	if lo != math.MinInt64 {
		out = append(out, atLeast(last, lo))
	}
	if hi != math.MaxInt64 {
		out = append(out, atMost(first, hi))
	}
	return out
}

// Nearest asks Qdrant for the k nearest allowed points by cosine similarity.
func (q *Store) Nearest(ctx context.Context, v []float32, k int, f papersearch.Filter) (_ []storage.Candidate, err error) {
	defer markUnavailable(&err)
	if len(v) != q.model.Dim {
		return nil, fmt.Errorf("nearest: %w: %d, want %d", storage.ErrDimension, len(v), q.model.Dim)
	}
	out, err := q.query(ctx, qc.NewQueryDense(v), qdrantDense, k, f)
	if err != nil {
		return nil, fmt.Errorf("nearest: %w", err)
	}
	return out, nil
}

// Lexical asks Qdrant for the k best allowed points by BM25: the query's
// term counts times idf, from this store's collection-wide document
// frequencies, against the documents' BM25 term weights. It is the
// embedded store's score, on any number of shards.
func (q *Store) Lexical(ctx context.Context, terms []string, k int, f papersearch.Filter) (_ storage.Matches, err error) {
	defer markUnavailable(&err)
	scored, ideal, err := q.weigh(ctx, terms)
	if err != nil || len(scored) == 0 {
		return storage.Matches{Ideal: ideal, Terms: scored}, err
	}
	idx := make([]uint32, len(scored))
	val := make([]float32, len(scored))
	for i, t := range scored {
		idx[i], val[i] = sparseTerm(t.Term), float32(t.Weight) // query tf × idf
	}
	out, err := q.query(ctx, qc.NewQuerySparse(idx, val), qdrantSparse, k, f)
	if err != nil {
		return storage.Matches{}, fmt.Errorf("lexical: %w", err)
	}
	return storage.Matches{Candidates: out, Ideal: ideal, Terms: scored}, nil
}

// weigh reads a lexical query as the embedded store does (see weighTerms),
// with this collection's document frequencies, counting them first if a
// write left them uncertain.
func (q *Store) weigh(ctx context.Context, terms []string) ([]lexical.WeightedTerm, float64, error) {
	q.lexMu.RLock()
	if q.terms.stale {
		q.lexMu.RUnlock()
		q.lexMu.Lock()
		var err error
		if q.terms.stale {
			err = q.countTerms(ctx)
		}
		q.lexMu.Unlock()
		if err != nil {
			return nil, 0, err
		}
		q.lexMu.RLock()
	}
	defer q.lexMu.RUnlock()
	scored, ideal := lexical.WeighTerms(terms, q.terms.n, func(t string) int { return int(q.terms.df[sparseTerm(t)]) })
	return scored, ideal, nil
}

func (q *Store) query(ctx context.Context, query *qc.Query, using string, k int, f papersearch.Filter) ([]storage.Candidate, error) {
	points, err := q.client.Query(ctx, &qc.QueryPoints{
		CollectionName: q.coll, Query: query, Using: qc.PtrOf(using),
		Filter: filterOf(f), Limit: qc.PtrOf(uint64(k)), WithPayload: qc.NewWithPayloadInclude(fieldPaperID),
		ReadConsistency: q.read, Params: q.search,
	})
	if err != nil {
		return nil, err
	}
	out := make([]storage.Candidate, len(points))
	for i, p := range points {
		out[i] = storage.Candidate{ID: p.GetPayload()[fieldPaperID].GetStringValue(), Score: p.GetScore()}
	}
	return out, nil
}
