package qdrant

import (
	"context"
	"fmt"
	"math"
	"time"

	qc "github.com/qdrant/go-client/qdrant"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/lexical"
)

// termStats are a collection's document frequencies as this process knows
// them: the points holding each term (by sparse index) and the points in
// all. They weigh and prune query terms as the embedded store does and
// give the query's ideal score. They are counted from the collection on
// open and kept up to date by this process's writes; after a write whose
// outcome is unknown, or when an exact point count (Count, every 2 s at
// most) disagrees with theirs because another process wrote, they are
// counted again before the next query. They live in no other place, so
// there is nothing to lose with a node or to reconcile between writers:
// they are always derived from the points the collection holds.
type termStats struct {
	df    map[uint32]int32
	n     int
	stale bool
}

func (s *termStats) add(idx []uint32, by int32) {
	for _, i := range idx {
		if s.df[i] += by; s.df[i] <= 0 {
			delete(s.df, i)
		}
	}
	s.n += int(by)
}

// countTerms counts the collection's document frequencies afresh. The
// caller holds q.lexMu for writing.
func (q *Store) countTerms(ctx context.Context) error {
	start := time.Now()
	stats := termStats{df: map[uint32]int32{}}
	var offset *qc.PointId
	for {
		points, next, err := q.client.ScrollAndOffset(ctx, &qc.ScrollPoints{CollectionName: q.coll,
			Limit: qc.PtrOf(uint32(1000)), Offset: offset, WithPayload: qc.NewWithPayload(false),
			WithVectors: qc.NewWithVectorsInclude(qdrantSparse), ReadConsistency: q.read})
		if err != nil {
			return fmt.Errorf("count the terms of qdrant collection %s: %w", q.coll, err)
		}
		for _, p := range points {
			stats.add(sparseIndices(p.GetVectors()), 1)
		}
		if next == nil {
			break
		}
		offset = next
	}
	q.terms = stats
	q.log.Info("counted document frequencies", "collection", q.coll, "papers", stats.n,
		"terms", len(stats.df), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// sparseIndices returns the term indices of a point's sparse vector.
func sparseIndices(v *qc.VectorsOutput) []uint32 {
	sv := v.GetVectors().GetVectors()[qdrantSparse]
	if sv == nil {
		return nil
	}
	if s := sv.GetSparse(); s != nil {
		return s.GetIndices()
	}
	return sv.GetIndices().GetData()
}

// storedTerms returns the sparse indices of those of ids that exist, and
// when each was added, by point id.
func (q *Store) storedTerms(ctx context.Context, ids []string) (map[string][]uint32, map[string]time.Time, error) {
	pids := make([]*qc.PointId, len(ids))
	for i, id := range ids {
		pids[i] = pointID(id)
	}
	var points []*qc.RetrievedPoint
	err := retryUnavailable(ctx, func() (err error) {
		points, err = q.client.Get(ctx, &qc.GetPoints{CollectionName: q.coll, Ids: pids,
			WithPayload: qc.NewWithPayloadInclude(fieldAdded), WithVectors: qc.NewWithVectorsInclude(qdrantSparse),
			ReadConsistency: q.read})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	out := make(map[string][]uint32, len(points))
	added := make(map[string]time.Time, len(points))
	for _, p := range points {
		out[p.GetId().GetUuid()] = sparseIndices(p.GetVectors())
		added[p.GetId().GetUuid()] = addedOf(p.GetPayload())
	}
	return out, added, nil
}

// avgDocLenDrift is how far the collection's true average document length
// may drift from the one its BM25 weights were computed with before
// RefreshLexical re-weights every point.
const avgDocLenDrift = 0.01

// RefreshLexical keeps BM25's length normalisation true to the collection:
// when the average analysed length of its papers has drifted more than 1%
// from the one the sparse weights were computed with, it recomputes every
// point's weights and records the new average. Ingest calls it when done.
func (q *Store) RefreshLexical(ctx context.Context) (err error) {
	defer markUnavailable(&err)
	q.lexMu.Lock()
	defer q.lexMu.Unlock()
	var total, n int64
	scroll := func(withPayload *qc.WithPayloadSelector, fn func(*qc.RetrievedPoint) error) error {
		var offset *qc.PointId
		for {
			points, next, err := q.client.ScrollAndOffset(ctx, &qc.ScrollPoints{CollectionName: q.coll,
				Limit: qc.PtrOf(uint32(1000)), Offset: offset, WithPayload: withPayload, ReadConsistency: q.read})
			if err != nil {
				return err
			}
			for _, p := range points {
				if err := fn(p); err != nil {
					return err
				}
			}
			if next == nil {
				return nil
			}
			offset = next
		}
	}
	err = scroll(qc.NewWithPayloadInclude(fieldDocLen), func(p *qc.RetrievedPoint) error {
		total += p.GetPayload()[fieldDocLen].GetIntegerValue()
		n++
		return nil
	})
	if err != nil {
		return fmt.Errorf("refresh lexical weights: %w", err)
	}
	if n == 0 {
		return nil
	}
	avg := float64(total) / float64(n)
	if math.Abs(avg-q.avgdl)/q.avgdl <= avgDocLenDrift {
		return nil
	}
	q.log.Info("re-weighting BM25 vectors for the collection's average length", "collection", q.coll,
		"was", q.avgdl, "now", avg, "papers", n)
	old := q.avgdl
	q.avgdl = avg
	var batch []*qc.PointVectors
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, err := q.client.UpdateVectors(ctx, &qc.UpdatePointVectors{CollectionName: q.coll, Wait: qc.PtrOf(true), Points: batch})
		batch = batch[:0]
		return err
	}
	err = scroll(qc.NewWithPayloadInclude(fieldTitle, fieldAbstract), func(p *qc.RetrievedPoint) error {
		paper := papersearch.Paper{Title: p.GetPayload()[fieldTitle].GetStringValue(), Abstract: p.GetPayload()[fieldAbstract].GetStringValue()}
		batch = append(batch, &qc.PointVectors{Id: p.GetId(),
			Vectors: qc.NewVectorsMap(map[string]*qc.Vector{qdrantSparse: q.sparseBM25(lexical.Analyze(paper.Text()))})})
		if len(batch) == 256 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err == nil {
		err = q.client.UpdateCollection(ctx, &qc.UpdateCollection{CollectionName: q.coll,
			Metadata: qc.NewValueMap(map[string]any{metaAvgDocLen: avg})})
	}
	if err != nil {
		q.avgdl = old
		return fmt.Errorf("refresh lexical weights: %w", err)
	}
	return nil
}
