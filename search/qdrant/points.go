package qdrant

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/google/uuid"
	qc "github.com/qdrant/go-client/qdrant"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/storage"
)

// pointNamespace derives point ids: UUIDv5 of the paper id in it.
var pointNamespace = uuid.MustParse("6f1d5c4e-8a0b-5b7e-9c3d-2e4f6a8b0c1d")

// pointID returns the Qdrant point id of a paper: a UUIDv5 of its id.
func pointID(paperID string) *qc.PointId {
	return qc.NewIDUUID(uuid.NewSHA1(pointNamespace, []byte(paperID)).String())
}

// countTTL is how long Count answers from its last exact count: every
// response carries the index's size, and an exact count costs Qdrant about
// 2 ms at 29,100 points, more than a dense search's share.
const countTTL = 2 * time.Second

// Upsert writes docs in requests of upsertSize, each acknowledged once
// Qdrant applied it, all of them or none: when a request after the first
// fails, the ones before are undone (each paper they replaced written back,
// each they added removed), so a failed Upsert leaves the collection as it
// was; if undoing fails too, the error says so.
func (q *Store) Upsert(ctx context.Context, docs []storage.Document) (err error) {
	defer markUnavailable(&err)
	defer q.forgetCount()
	if err := storage.CheckDimensions(docs, q.model.Dim); err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	q.lexMu.Lock()
	defer q.lexMu.Unlock()
	var before []storage.Document // what a write of several requests replaces
	if len(docs) > upsertSize {
		ids := make([]string, len(docs))
		for i, d := range docs {
			ids[i] = d.Paper.ID
		}
		for start := 0; start < len(ids); start += upsertSize {
			var old []storage.Document
			err := retryUnavailable(ctx, func() (err error) {
				old, err = q.get(ctx, ids[start:min(start+upsertSize, len(ids))], true)
				return err
			})
			if err != nil {
				return fmt.Errorf("upsert %d papers into qdrant: read the versions they replace: %w", len(docs), err)
			}
			before = append(before, old...)
		}
	}
	for start := 0; start < len(docs); start += upsertSize {
		end := min(start+upsertSize, len(docs))
		err := q.write(ctx, start, docs[start:end])
		if err == nil {
			continue
		}
		if start > 0 {
			if uerr := q.undo(context.WithoutCancel(ctx), docs[:end], before); uerr != nil {
				return fmt.Errorf("upsert %d papers into qdrant: %w; undoing papers 1-%d failed too, so some of them may hold the new version: %v",
					len(docs), err, end, uerr)
			}
		}
		return fmt.Errorf("upsert %d papers into qdrant: nothing stored: %w", len(docs), err)
	}
	return nil
}

// write upserts one request's documents (start is the first one's place
// in its Upsert) and keeps the lexical statistics with them.
func (q *Store) write(ctx context.Context, start int, batch []storage.Document) error {
	points := make([]*qc.PointStruct, len(batch))
	ids, added := make([]string, len(batch)), make([][]uint32, len(batch))
	for i, d := range batch {
		ids[i] = d.Paper.ID
	}
	old, oldAdded, err := q.storedTerms(ctx, ids)
	if err != nil {
		return fmt.Errorf("read their terms: %w", err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	for i, d := range batch {
		// When it was first stored: the earliest known, or now.
		if d.Paper.Added = papersearch.EarlierAdded(d.Paper.Added, oldAdded[pointID(d.Paper.ID).GetUuid()]); d.Paper.Added.IsZero() {
			d.Paper.Added = now
		}
		d.Paper.Added = d.Paper.Added.Truncate(time.Second)
		terms := d.AnalysedTerms()
		payload, err := qc.TryValueMap(payloadOf(d, len(terms)))
		if err != nil {
			return fmt.Errorf("%s: payload: %w", d.Paper.ID, err)
		}
		sparse := q.sparseBM25(terms)
		added[i] = sparse.GetSparse().GetIndices()
		points[i] = &qc.PointStruct{
			Id:      pointID(d.Paper.ID),
			Vectors: qc.NewVectorsMap(q.vectorsOf(d, sparse)),
			Payload: payload,
		}
	}
	err = retryUnavailable(ctx, func() error {
		if q.beforeWrite != nil {
			if err := q.beforeWrite(start); err != nil {
				return err
			}
		}
		_, err := q.client.Upsert(ctx, &qc.UpsertPoints{CollectionName: q.coll, Wait: qc.PtrOf(true), Points: points})
		return err
	})
	if err != nil {
		q.terms.stale = true // some of the batch may have been applied
		return err
	}
	for i, p := range points {
		if idx, ok := old[p.GetId().GetUuid()]; ok {
			q.terms.add(idx, -1)
		}
		q.terms.add(added[i], 1)
	}
	return nil
}

// undo restores the papers of written to the versions in before: those
// it holds are written back, the others removed.
func (q *Store) undo(ctx context.Context, written, before []storage.Document) error {
	had := make(map[string]bool, len(before))
	for _, d := range before {
		had[d.Paper.ID] = true
	}
	var added []string
	for _, d := range written {
		if !had[d.Paper.ID] {
			added = append(added, d.Paper.ID)
		}
	}
	for start := 0; start < len(before); start += upsertSize {
		if err := q.write(ctx, -1, before[start:min(start+upsertSize, len(before))]); err != nil {
			return fmt.Errorf("write back what it replaced: %w", err)
		}
	}
	if _, err := q.remove(ctx, added); err != nil {
		return fmt.Errorf("remove what it added: %w", err)
	}
	return nil
}

// remove deletes the points of ids that exist, keeping the lexical
// statistics with them, and returns how many there were.
func (q *Store) remove(ctx context.Context, ids []string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	old, _, err := q.storedTerms(ctx, ids)
	if err != nil || len(old) == 0 {
		return 0, err
	}
	pids := make([]*qc.PointId, len(ids))
	for i, id := range ids {
		pids[i] = pointID(id)
	}
	err = retryUnavailable(ctx, func() error {
		_, err := q.client.Delete(ctx, &qc.DeletePoints{CollectionName: q.coll, Wait: qc.PtrOf(true),
			Points: qc.NewPointsSelector(pids...)})
		return err
	})
	if err != nil {
		q.terms.stale = true
		return 0, err
	}
	for _, idx := range old {
		q.terms.add(idx, -1)
	}
	return len(old), nil
}

// vectorsOf returns the named vectors of a document's point: dense, the
// sparse BM25 one, and its sentences' multivector when it has sentences
// and the collection keeps them.
func (q *Store) vectorsOf(d storage.Document, sparse *qc.Vector) map[string]*qc.Vector {
	vs := map[string]*qc.Vector{qdrantDense: qc.NewVectorDense(d.Vector), qdrantSparse: sparse}
	if q.sentences && len(d.Sentences) > 0 {
		multi := make([][]float32, len(d.Sentences))
		for i, s := range d.Sentences {
			multi[i] = s.Vector
		}
		vs[qdrantSentences] = qc.NewVectorMulti(multi)
	}
	return vs
}

func payloadOf(d storage.Document, docLen int) map[string]any {
	authors := make([]any, len(d.Paper.Authors))
	names := make([]any, len(d.Paper.Authors))
	for i, a := range d.Paper.Authors {
		authors[i] = a
		names[i] = strings.Join(storage.NameWords(a), " ")
	}
	tags := make([]any, len(d.Paper.Tags))
	for i, t := range d.Paper.Tags {
		tags[i] = t
	}
	sources := make([]any, len(d.Paper.Sources))
	for i, s := range d.Paper.Sources {
		sources[i] = map[string]any{"id": s.ID, "url": s.URL}
	}
	var rs strings.Builder
	for _, s := range d.Sentences {
		rs.WriteByte(byte('0' + s.Role))
	}
	payload := map[string]any{
		fieldSources: sources, fieldWorkKeys: workKeysOf(d.Paper), fieldSentenceRoles: rs.String(),
		fieldTags: tags, fieldPaperID: d.Paper.ID, fieldTitle: d.Paper.Title, fieldAbstract: d.Paper.Abstract,
		fieldAuthors: authors, fieldVenue: d.Paper.Venue, fieldYear: int64(d.Paper.Year), fieldURL: d.Paper.URL,
		fieldType: d.Paper.Type, fieldTextHash: d.TextHash, fieldPaperHash: d.PaperHash,
		fieldVenueKey: storage.VenueKey(d.Paper.Venue), fieldAuthorNames: names,
		fieldDocLen: int64(docLen), fieldDate: d.Paper.Date, fieldAdded: d.Paper.Added.Unix(),
	}
	maps.Copy(payload, daysPayload(d.Paper))
	return payload
}

// daysPayload is the payload of the days a paper was published on: none
// for a paper with no date and no year, so that no range holds it.
func daysPayload(p papersearch.Paper) map[string]any {
	days := storage.PaperDays(p)
	if days == storage.NoDate {
		return nil
	}
	return map[string]any{fieldDayFirst: days[0], fieldDayLast: days[1]}
}

// Delete removes one document.
func (q *Store) Delete(ctx context.Context, id string) (err error) {
	defer markUnavailable(&err)
	defer q.forgetCount()
	q.lexMu.Lock()
	defer q.lexMu.Unlock()
	n, err := q.remove(ctx, []string{id})
	if err != nil {
		return fmt.Errorf("delete %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %q", storage.ErrNotFound, id)
	}
	return nil
}

// Tags counts the papers holding each tag, by Qdrant's facet counts of the
// tags field (exact, at most search.MaxTags tags).
func (q *Store) Tags(ctx context.Context) (_ map[string]int, err error) {
	defer markUnavailable(&err)
	hits, err := q.client.Facet(ctx, &qc.FacetCounts{CollectionName: q.coll, Key: fieldTags,
		Limit: qc.PtrOf(uint64(search.MaxTags)), Exact: qc.PtrOf(true)})
	if err != nil {
		return nil, fmt.Errorf("count tags: %w", err)
	}
	out := make(map[string]int, len(hits))
	for _, h := range hits {
		out[h.GetValue().GetStringValue()] = int(h.GetCount())
	}
	return out, nil
}

// Count returns the number of documents: an exact count, reused for up to
// countTTL, and counted again after each write by this process. So it
// is exact for this process's own writes and at most countTTL behind
// other writers'.
func (q *Store) Count(ctx context.Context) (_ int, err error) {
	defer markUnavailable(&err)
	q.countMu.Lock()
	defer q.countMu.Unlock()
	if !q.countAt.IsZero() && time.Since(q.countAt) < countTTL {
		return q.count, nil
	}
	n, err := q.client.Count(ctx, &qc.CountPoints{CollectionName: q.coll, Exact: qc.PtrOf(true)})
	if err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	q.count, q.countAt = int(n), time.Now()
	// A count other than the one the document frequencies hold means
	// another process wrote to the collection: count the frequencies again
	// before the next lexical query. (Lock order: countMu, then lexMu; a
	// write releases lexMu before it forgets the count.)
	q.lexMu.Lock()
	if q.terms.n != q.count {
		q.terms.stale = true
	}
	q.lexMu.Unlock()
	return q.count, nil
}

// forgetCount drops the cached count after a write.
func (q *Store) forgetCount() {
	q.countMu.Lock()
	q.countAt = time.Time{}
	q.countMu.Unlock()
}

// workKeysOf is p's work keys as a point's payload holds them.
func workKeysOf(p papersearch.Paper) []any {
	keys := papersearch.WorkKeys(p)
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}
