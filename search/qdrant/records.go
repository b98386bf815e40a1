package qdrant

import (
	"context"
	"encoding/base64"
	"fmt"
	"sync"

	"github.com/google/uuid"
	"github.com/papersearch/papersearch/search/storage"
	qc "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The service's own state (storage.Records) lives in a collection of its
// own beside the papers' (its name with recordsSuffix), one point a record
// with a one-dimensional vector nobody searches: every instance on the
// same Qdrant reads and writes the same alerts and keys. Records are
// written with strong ordering and read by majority, so what one instance
// wrote is what the next read through any instance finds.

// recordsSuffix names the records' collection after the papers'.
const recordsSuffix = "_records"

// Payload fields of a record's point.
const (
	recordKind = "kind"
	recordID   = "id"
	recordDoc  = "doc"
)

// recordNamespace is the UUID name space of records' point ids.
var recordNamespace = uuid.MustParse("3f0b1d4e-6c0a-5b7e-9a51-2f2c5e8d7a10") // read-only

// recordPoint is the point id of the record of that kind and id.
func recordPoint(kind, id string) *qc.PointId {
	return qc.NewIDUUID(uuid.NewSHA1(recordNamespace, []byte(kind+"\x00"+id)).String())
}

// records is the records' collection, created on first use.
type records struct {
	mu          sync.Mutex
	ready       bool
	replication uint32
}

// recordsCollection returns the records' collection's name, creating it
// (and its kind index) the first time.
func (q *Store) recordsCollection(ctx context.Context) (string, error) {
	name := q.coll + recordsSuffix
	q.records.mu.Lock()
	defer q.records.mu.Unlock()
	if q.records.ready {
		return name, nil
	}
	exists, err := q.client.CollectionExists(ctx, name)
	if err != nil {
		return "", fmt.Errorf("qdrant collection %s: %w", name, err)
	}
	if !exists {
		err := q.client.CreateCollection(ctx, &qc.CreateCollection{
			CollectionName:    name,
			VectorsConfig:     qc.NewVectorsConfig(&qc.VectorParams{Size: 1, Distance: qc.Distance_Dot}),
			ShardNumber:       qc.PtrOf(uint32(1)),
			ReplicationFactor: optional(q.records.replication),
		})
		if err != nil && status.Code(err) != codes.AlreadyExists {
			return "", fmt.Errorf("create qdrant collection %s: %w", name, err)
		}
		_, err = q.client.CreateFieldIndex(ctx, &qc.CreateFieldIndexCollection{CollectionName: name, FieldName: recordKind,
			FieldType: qc.FieldType_FieldTypeKeyword.Enum(), Wait: qc.PtrOf(true)})
		if err != nil {
			return "", fmt.Errorf("index qdrant collection %s: %w", name, err)
		}
	}
	q.records.ready = true
	return name, nil
}

// majority is the read consistency of records.
var majority = qc.NewReadConsistencyType(qc.ReadConsistencyType_Majority) // read-only

// PutRecord keeps a record as a point of the records' collection.
func (q *Store) PutRecord(ctx context.Context, kind, id string, doc []byte) (err error) {
	defer markUnavailable(&err)
	coll, err := q.recordsCollection(ctx)
	if err != nil {
		return err
	}
	point := &qc.PointStruct{Id: recordPoint(kind, id), Vectors: qc.NewVectorsDense([]float32{1}),
		Payload: qc.NewValueMap(map[string]any{recordKind: kind, recordID: id, recordDoc: base64.StdEncoding.EncodeToString(doc)})}
	err = retryUnavailable(ctx, func() error {
		_, err := q.client.Upsert(ctx, &qc.UpsertPoints{CollectionName: coll, Wait: qc.PtrOf(true), Points: []*qc.PointStruct{point},
			Ordering: &qc.WriteOrdering{Type: qc.WriteOrderingType_Strong}})
		return err
	})
	if err != nil {
		return fmt.Errorf("keep the %s %q: %w", kind, id, err)
	}
	return nil
}

// GetRecord reads a record.
func (q *Store) GetRecord(ctx context.Context, kind, id string) (_ []byte, err error) {
	defer markUnavailable(&err)
	coll, err := q.recordsCollection(ctx)
	if err != nil {
		return nil, err
	}
	points, err := q.client.Get(ctx, &qc.GetPoints{CollectionName: coll, Ids: []*qc.PointId{recordPoint(kind, id)},
		WithPayload: qc.NewWithPayload(true), ReadConsistency: majority})
	if err != nil {
		return nil, fmt.Errorf("read the %s %q: %w", kind, id, err)
	}
	if len(points) == 0 {
		return nil, fmt.Errorf("%w: %s %q", storage.ErrNotFound, kind, id)
	}
	return recordOf(points[0].GetPayload())
}

// recordOf is the document a record's payload holds: base64, as a
// payload's strings must be UTF-8 and a record (a key) need not be.
func recordOf(pl map[string]*qc.Value) ([]byte, error) {
	doc, err := base64.StdEncoding.DecodeString(pl[recordDoc].GetStringValue())
	if err != nil {
		return nil, fmt.Errorf("the %s %q: %w", pl[recordKind].GetStringValue(), pl[recordID].GetStringValue(), err)
	}
	return doc, nil
}

// ListRecords reads every record of a kind.
func (q *Store) ListRecords(ctx context.Context, kind string) (_ map[string][]byte, err error) {
	defer markUnavailable(&err)
	coll, err := q.recordsCollection(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	req := &qc.ScrollPoints{CollectionName: coll, Limit: qc.PtrOf(uint32(1000)), WithPayload: qc.NewWithPayload(true),
		Filter: &qc.Filter{Must: []*qc.Condition{qc.NewMatchKeyword(recordKind, kind)}}, ReadConsistency: majority}
	for {
		points, next, err := q.client.ScrollAndOffset(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("read the %s records: %w", kind, err)
		}
		for _, p := range points {
			pl := p.GetPayload()
			doc, err := recordOf(pl)
			if err != nil {
				return nil, err
			}
			out[pl[recordID].GetStringValue()] = doc
		}
		if next == nil {
			return out, nil
		}
		req.Offset = next
	}
}

// DeleteRecord removes a record.
func (q *Store) DeleteRecord(ctx context.Context, kind, id string) (err error) {
	defer markUnavailable(&err)
	if _, err := q.GetRecord(ctx, kind, id); err != nil {
		return err
	}
	coll, err := q.recordsCollection(ctx)
	if err != nil {
		return err
	}
	err = retryUnavailable(ctx, func() error {
		_, err := q.client.Delete(ctx, &qc.DeletePoints{CollectionName: coll, Wait: qc.PtrOf(true),
			Points: qc.NewPointsSelector(recordPoint(kind, id)), Ordering: &qc.WriteOrdering{Type: qc.WriteOrderingType_Strong}})
		return err
	})
	if err != nil {
		return fmt.Errorf("remove the %s %q: %w", kind, id, err)
	}
	return nil
}

var _ storage.Records = (*Store)(nil)
