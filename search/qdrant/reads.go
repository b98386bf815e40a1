package qdrant

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	qc "github.com/qdrant/go-client/qdrant"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/roles"
	"github.com/papersearch/papersearch/search/storage"
)

// sentencesOf reads a point's sentences: the multivector and the roles in
// its payload; nil when it has none.
func sentencesOf(payload map[string]*qc.Value, vectors *qc.VectorsOutput) []storage.Sentence {
	multi := vectors.GetVectors().GetVectors()[qdrantSentences].GetMultiVector().GetVectors()
	rs := payload[fieldSentenceRoles].GetStringValue()
	if len(multi) == 0 || len(multi) != len(rs) {
		return nil
	}
	out := make([]storage.Sentence, len(multi))
	for i, v := range multi {
		out[i] = storage.Sentence{Role: roles.Role(rs[i] - '0'), Vector: v.GetData()}
	}
	return out
}

func documentOf(payload map[string]*qc.Value, vectors *qc.VectorsOutput) storage.Document {
	str := func(k string) string { return payload[k].GetStringValue() }
	var authors []string
	for _, v := range payload[fieldAuthors].GetListValue().GetValues() {
		authors = append(authors, v.GetStringValue())
	}
	if authors == nil {
		authors = []string{}
	}
	var tags []string
	for _, v := range payload[fieldTags].GetListValue().GetValues() {
		tags = append(tags, v.GetStringValue())
	}
	var sources []papersearch.Source
	for _, v := range payload[fieldSources].GetListValue().GetValues() {
		f := v.GetStructValue().GetFields()
		sources = append(sources, papersearch.Source{ID: f["id"].GetStringValue(), URL: f["url"].GetStringValue()})
	}
	d := storage.Document{
		Paper: papersearch.Paper{ID: str(fieldPaperID), Title: str(fieldTitle), Abstract: str(fieldAbstract),
			Authors: authors, Venue: str(fieldVenue), Year: int(payload[fieldYear].GetIntegerValue()), URL: str(fieldURL),
			Type: str(fieldType), Tags: tags, Sources: sources, Date: str(fieldDate), Added: addedOf(payload)},
		TextHash:  str(fieldTextHash),
		PaperHash: str(fieldPaperHash),
	}
	d.Sentences = sentencesOf(payload, vectors)
	if v := vectors.GetVectors().GetVectors()[qdrantDense]; v != nil {
		d.Vector = append([]float32(nil), v.GetDense().GetData()...)
		if len(d.Vector) == 0 {
			d.Vector = append([]float32(nil), v.GetData()...)
		}
	}
	return d
}

// addedOf is when the paper of a point's payload was added; zero when it
// says none.
func addedOf(payload map[string]*qc.Value) time.Time {
	if s := payload[fieldAdded].GetIntegerValue(); s != 0 {
		return time.Unix(s, 0).UTC()
	}
	return time.Time{}
}

// get fetches points by paper id, with or without vectors.
func (q *Store) get(ctx context.Context, ids []string, vectors bool) ([]storage.Document, error) {
	pids := make([]*qc.PointId, len(ids))
	for i, id := range ids {
		pids[i] = pointID(id)
	}
	points, err := q.client.Get(ctx, &qc.GetPoints{
		CollectionName: q.coll, Ids: pids, WithPayload: qc.NewWithPayload(true),
		WithVectors: qc.NewWithVectors(vectors), ReadConsistency: q.read,
	})
	if err != nil {
		return nil, err
	}
	docs := make([]storage.Document, 0, len(points))
	for _, p := range points {
		docs = append(docs, documentOf(p.GetPayload(), p.GetVectors()))
	}
	return docs, nil
}

// Get returns one document.
func (q *Store) Get(ctx context.Context, id string) (_ storage.Document, err error) {
	defer markUnavailable(&err)
	docs, err := q.get(ctx, []string{id}, true)
	if err != nil {
		return storage.Document{}, fmt.Errorf("get %q: %w", id, err)
	}
	if len(docs) == 0 {
		return storage.Document{}, fmt.Errorf("%w: %q", storage.ErrNotFound, id)
	}
	return docs[0], nil
}

// Vectors returns the dense vectors of those of ids that exist, 1,000 a
// request.
func (q *Store) Vectors(ctx context.Context, ids []string) (_ map[string][]float32, err error) {
	defer markUnavailable(&err)
	out := make(map[string][]float32, len(ids))
	for start := 0; start < len(ids); start += 1000 {
		pids := make([]*qc.PointId, 0, 1000)
		for _, id := range ids[start:min(start+1000, len(ids))] {
			pids = append(pids, pointID(id))
		}
		points, err := q.client.Get(ctx, &qc.GetPoints{CollectionName: q.coll, Ids: pids,
			WithPayload: qc.NewWithPayloadInclude(fieldPaperID), WithVectors: qc.NewWithVectorsInclude(qdrantDense), ReadConsistency: q.read})
		if err != nil {
			return nil, fmt.Errorf("vectors: %w", err)
		}
		for _, p := range points {
			d := documentOf(p.GetPayload(), p.GetVectors())
			out[d.Paper.ID] = d.Vector
		}
	}
	return out, nil
}

// Lookup returns the papers of those ids that exist, in one request.
func (q *Store) Lookup(ctx context.Context, ids []string) (_ map[string]papersearch.Paper, err error) {
	defer markUnavailable(&err)
	docs, err := q.get(ctx, ids, false)
	if err != nil {
		return nil, fmt.Errorf("lookup: %w", err)
	}
	out := make(map[string]papersearch.Paper, len(docs))
	for _, d := range docs {
		out[d.Paper.ID] = d.Paper
	}
	return out, nil
}

// Works returns the papers holding any of keys among their work keys: a
// scroll filtered on the indexed work_keys field.
func (q *Store) Works(ctx context.Context, keys []string) (_ map[string]papersearch.Paper, err error) {
	defer markUnavailable(&err)
	out := make(map[string]papersearch.Paper)
	for start := 0; start < len(keys); start += 1000 {
		part := keys[start:min(start+1000, len(keys))]
		req := &qc.ScrollPoints{CollectionName: q.coll, Limit: qc.PtrOf(uint32(scrollLimit)),
			Filter:      &qc.Filter{Must: []*qc.Condition{qc.NewMatchKeywords(fieldWorkKeys, part...)}},
			WithPayload: qc.NewWithPayload(true), ReadConsistency: q.read}
		for {
			points, next, err := q.client.ScrollAndOffset(ctx, req)
			if err != nil {
				return nil, fmt.Errorf("works: %w", err)
			}
			for _, p := range points {
				d := documentOf(p.GetPayload(), nil)
				out[d.Paper.ID] = d.Paper
			}
			if next == nil {
				break
			}
			req.Offset = next
		}
	}
	return out, nil
}

// KeepsSentences reports whether the collection has sentence vectors.
func (q *Store) KeepsSentences() bool { return q.sentences }

// Sentences returns the sentences of those of ids that have them, read
// with their multivectors in one request; ErrNoSentences for a collection
// created before sentences were kept.
func (q *Store) Sentences(ctx context.Context, ids []string) (_ map[string][]storage.Sentence, err error) {
	defer markUnavailable(&err)
	if !q.sentences {
		return nil, fmt.Errorf("qdrant collection %s: %w", q.coll, storage.ErrNoSentences)
	}
	out := make(map[string][]storage.Sentence, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	pids := make([]*qc.PointId, len(ids))
	for i, id := range ids {
		pids[i] = pointID(id)
	}
	points, err := q.client.Get(ctx, &qc.GetPoints{
		CollectionName: q.coll, Ids: pids, ReadConsistency: q.read,
		WithPayload: qc.NewWithPayloadInclude(fieldPaperID, fieldSentenceRoles),
		WithVectors: qc.NewWithVectorsInclude(qdrantSentences),
	})
	if err != nil {
		return nil, fmt.Errorf("sentences: %w", err)
	}
	for _, p := range points {
		if ss := sentencesOf(p.GetPayload(), p.GetVectors()); ss != nil {
			out[p.GetPayload()[fieldPaperID].GetStringValue()] = ss
		}
	}
	return out, nil
}

// scrollLimit is how many points one scroll request of Works asks for.
const scrollLimit = 256

// Fingerprints returns the stored hashes of the ids that exist.
func (q *Store) Fingerprints(ctx context.Context, ids []string) (_ map[string]storage.Fingerprint, err error) {
	defer markUnavailable(&err)
	out := make(map[string]storage.Fingerprint, len(ids))
	for start := 0; start < len(ids); start += 1000 {
		// A write's first read: retried as its writes are.
		var docs []storage.Document
		err := retryUnavailable(ctx, func() (err error) {
			docs, err = q.get(ctx, ids[start:min(start+1000, len(ids))], false)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("fingerprints: %w", err)
		}
		for _, d := range docs {
			out[d.Paper.ID] = storage.Fingerprint{TextHash: d.TextHash, PaperHash: d.PaperHash, Added: d.Paper.Added}
		}
	}
	return out, nil
}

// Scroll pages through documents in point-id order; the cursor is the next
// page's first point id.
func (q *Store) Scroll(ctx context.Context, cursor string, limit int) (_ []storage.Document, _ string, err error) {
	defer markUnavailable(&err)
	req := &qc.ScrollPoints{CollectionName: q.coll, Limit: qc.PtrOf(uint32(limit)),
		WithPayload: qc.NewWithPayload(true), WithVectors: qc.NewWithVectors(true), ReadConsistency: q.read}
	if cursor != "" {
		if _, err := uuid.Parse(cursor); err != nil {
			return nil, "", fmt.Errorf("scroll: invalid cursor %q", cursor)
		}
		req.Offset = qc.NewIDUUID(cursor)
	}
	points, next, err := q.client.ScrollAndOffset(ctx, req)
	if err != nil {
		return nil, "", fmt.Errorf("scroll: %w", err)
	}
	docs := make([]storage.Document, len(points))
	for i, p := range points {
		docs[i] = documentOf(p.GetPayload(), p.GetVectors())
	}
	return docs, next.GetUuid(), nil
}
