package qdrant

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"
	qc "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/storage"
)

// collectionParams are the settings of a new collection from cfg.
func collectionParams(cfg Config) (*qc.HnswConfigDiff, *qc.QuantizationConfig, error) {
	var hnsw *qc.HnswConfigDiff
	if cfg.HNSWM != 0 || cfg.HNSWEFConstruct != 0 {
		hnsw = &qc.HnswConfigDiff{M: optional(cfg.HNSWM), EfConstruct: optional(cfg.HNSWEFConstruct)}
	}
	switch cfg.Quantization {
	case QuantizationNone:
		return hnsw, nil, nil
	case QuantizationInt8, "":
		return hnsw, qc.NewQuantizationScalar(&qc.ScalarQuantization{
			Type: qc.QuantizationType_Int8, AlwaysRam: qc.PtrOf(true)}), nil
	}
	return nil, nil, fmt.Errorf("qdrant quantization %q: want none or int8", cfg.Quantization)
}

// sparseParams are the collection's settings of its BM25 sparse vector,
// nil if it has none.
func sparseParams(info *qc.CollectionInfo) *qc.SparseVectorParams {
	return info.GetConfig().GetParams().GetSparseVectorsConfig().GetMap()[qdrantSparse]
}

// dropQdrantIDF turns off Qdrant's own IDF on the sparse vectors of a
// collection created before papersearch weighed query terms itself. Qdrant
// computes IDF per shard, so lexical ranks depended on the shard count;
// the query now carries idf from this store's collection-wide document
// frequencies, as the embedded store's does, and Qdrant's must not apply
// on top. Setting it is idempotent, so concurrent openers agree.
func (q *Store) dropQdrantIDF(ctx context.Context, info *qc.CollectionInfo) error {
	if params := sparseParams(info); params.GetModifier() != qc.Modifier_Idf {
		return nil
	}
	turnOff := func() error {
		return q.client.UpdateCollection(ctx, &qc.UpdateCollection{CollectionName: q.coll,
			SparseVectorsConfig: qc.NewSparseVectorsConfig(map[string]*qc.SparseVectorParams{
				qdrantSparse: {Modifier: qc.Modifier_None.Enum()},
			})})
	}
	if err := turnOff(); err != nil {
		return fmt.Errorf("qdrant collection %s: turn off Qdrant's per-shard IDF: %w", q.coll, err)
	}
	// A cluster applies the change through consensus, after it answered,
	// and under load a node was seen to show the old modifier again after
	// showing the new one: wait until this node has shown it for 2 s (20
	// reads in a row), asking again whenever it shows the old one, so no
	// query weighs idf twice.
	seen := 0
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		info, err := q.client.GetCollectionInfo(ctx, q.coll)
		if err != nil {
			return struct{}{}, err
		}
		p := sparseParams(info)
		if p == nil {
			return struct{}{}, errors.New("the sparse vector's settings are not visible yet")
		}
		if p.GetModifier() == qc.Modifier_Idf {
			seen = 0
			if err := turnOff(); err != nil {
				return struct{}{}, err
			}
			return struct{}{}, errors.New("the change is not applied yet")
		}
		if seen++; seen < 20 {
			return struct{}{}, errors.New("the change is not settled yet")
		}
		return struct{}{}, nil
	}, backoff.WithBackOff(&backoff.ConstantBackOff{Interval: 100 * time.Millisecond}), backoff.WithMaxElapsedTime(60*time.Second))
	if err != nil {
		return fmt.Errorf("qdrant collection %s: turn off Qdrant's per-shard IDF: %w", q.coll, err)
	}
	q.log.Info("qdrant collection: lexical idf now from papersearch's document frequencies", "collection", q.coll)
	return nil
}

func (q *Store) ensureCollection(ctx context.Context, cfg Config) error {
	exists, err := q.client.CollectionExists(ctx, q.coll)
	if err != nil {
		return fmt.Errorf("qdrant at %s: %w", cfg.URL, err)
	}
	if !exists {
		if err := q.createCollection(ctx, cfg); err != nil {
			return err
		}
	}
	// A collection just created, or whose creation a crash interrupted, may
	// not answer until the cluster has set up its shards.
	info, err := backoff.Retry(ctx, func() (*qc.CollectionInfo, error) {
		info, err := q.client.GetCollectionInfo(ctx, q.coll)
		if c := status.Code(err); c == codes.InvalidArgument || c == codes.PermissionDenied || c == codes.Unauthenticated {
			return nil, backoff.Permanent(err)
		}
		return info, err
	}, backoff.WithMaxElapsedTime(30*time.Second))
	if err != nil {
		return fmt.Errorf("read qdrant collection %s: %w", q.coll, err)
	}
	// Indexes are ensured on every open, so a crash between creating the
	// collection and indexing it leaves nothing missing.
	if err := q.ensureIndexes(ctx); err != nil {
		return err
	}
	if err := q.dropQdrantIDF(ctx, info); err != nil {
		return err
	}
	_, q.sentences = info.GetConfig().GetParams().GetVectorsConfig().GetParamsMap().GetMap()[qdrantSentences]
	if !q.sentences {
		q.log.Warn("qdrant collection has no sentence vectors (created before they were kept): aspect similarity is not available on it; reindex into a new collection for it",
			"collection", q.coll)
	}
	return q.readMetadata(ctx, info.GetConfig().GetMetadata())
}

// createCollection creates the collection for cfg: its dense, sentence and
// sparse vectors, and the model, schema and mean document length in its
// metadata. Another process having created it first is no error.
func (q *Store) createCollection(ctx context.Context, cfg Config) error {
	hnsw, quant, err := collectionParams(cfg)
	if err != nil {
		return err
	}
	err = q.client.CreateCollection(ctx, &qc.CreateCollection{
		CollectionName: q.coll,
		VectorsConfig: qc.NewVectorsConfigMap(map[string]*qc.VectorParams{
			qdrantDense: {Size: uint64(q.model.Dim), Distance: qc.Distance_Cosine,
				OnDisk: qc.PtrOf(cfg.OnDiskVectors)},
			qdrantSentences: {Size: uint64(q.model.Dim), Distance: qc.Distance_Cosine,
				OnDisk:            qc.PtrOf(cfg.OnDiskVectors),
				HnswConfig:        &qc.HnswConfigDiff{M: qc.PtrOf(uint64(0))},
				MultivectorConfig: &qc.MultiVectorConfig{Comparator: qc.MultiVectorComparator_MaxSim}},
		}),
		HnswConfig:         hnsw,
		QuantizationConfig: quant,
		OnDiskPayload:      qc.PtrOf(cfg.OnDiskPayload),
		SparseVectorsConfig: qc.NewSparseVectorsConfig(map[string]*qc.SparseVectorParams{
			qdrantSparse: {Modifier: qc.Modifier_None.Enum()},
		}),
		ShardNumber:       optional(cfg.Shards),
		ReplicationFactor: optional(cfg.Replication),
		Metadata: qc.NewValueMap(map[string]any{
			metaModel: q.model.Name, metaDim: int64(q.model.Dim), metaSchema: int64(schemaVersion),
			metaAvgDocLen: cfg.AvgDocLen,
		}),
	})
	if status.Code(err) == codes.AlreadyExists {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create qdrant collection %s: %w", q.coll, err)
	}
	q.log.Info("created qdrant collection", "collection", q.coll, "dim", q.model.Dim,
		"shards", cfg.Shards, "replication", cfg.Replication, "hnsw_m", cfg.HNSWM, "hnsw_ef_construct", cfg.HNSWEFConstruct,
		"on_disk_vectors", cfg.OnDiskVectors, "on_disk_payload", cfg.OnDiskPayload, "quantization", cfg.Quantization)
	return nil
}

// readMetadata checks the model the collection's metadata records against
// the store's, reads its mean document length, and brings a collection of
// an older schema up to date.
func (q *Store) readMetadata(ctx context.Context, meta map[string]*qc.Value) error {
	name := meta[metaModel].GetStringValue()
	dim := int(meta[metaDim].GetIntegerValue())
	if name == "" {
		return fmt.Errorf("qdrant collection %s was not created by papersearch (no model recorded); choose another collection", q.coll)
	}
	if err := storage.CheckModel("qdrant collection "+q.coll, embed.ModelInfo{Name: name, Dim: dim}, q.model); err != nil {
		return err
	}
	q.avgdl = meta[metaAvgDocLen].GetDoubleValue()
	if q.avgdl <= 0 {
		q.avgdl = DefaultAvgDocLen
	}
	v := meta[metaSchema].GetIntegerValue()
	if v >= schemaVersion {
		return nil
	}
	if v < 8 {
		if err := q.refold(ctx); err != nil {
			return err
		}
	}
	if v < 6 {
		if err := q.dateAll(ctx); err != nil {
			return err
		}
	}
	if v < 7 {
		if err := q.rekey(ctx); err != nil {
			return err
		}
	}
	// Recorded once every step is done: an interrupted upgrade runs again
	// at the next open, each step rewriting points from their own payload.
	err := q.client.UpdateCollection(ctx, &qc.UpdateCollection{CollectionName: q.coll,
		Metadata: qc.NewValueMap(map[string]any{metaSchema: int64(schemaVersion)})})
	if err != nil {
		return fmt.Errorf("qdrant collection %s: record schema version %d: %w", q.coll, schemaVersion, err)
	}
	return nil
}

// rewrite updates every point of the collection with the operations
// update returns for it, given the payload fields named, 256 points a
// request.
func (q *Store) rewrite(ctx context.Context, fields []string, update func(pt *qc.RetrievedPoint) ([]*qc.PointsUpdateOperation, error)) (int, error) {
	n := 0
	var ops []*qc.PointsUpdateOperation
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		err := retryUnavailable(ctx, func() error {
			_, err := q.client.UpdateBatch(ctx, &qc.UpdateBatchPoints{CollectionName: q.coll, Wait: qc.PtrOf(true), Operations: ops})
			return err
		})
		ops = ops[:0]
		return err
	}
	var offset *qc.PointId
	for {
		points, next, err := q.client.ScrollAndOffset(ctx, &qc.ScrollPoints{CollectionName: q.coll, Limit: qc.PtrOf(uint32(256)),
			Offset: offset, WithPayload: qc.NewWithPayloadInclude(fields...), ReadConsistency: q.read})
		if err != nil {
			return n, err
		}
		for _, pt := range points {
			more, err := update(pt)
			if err != nil {
				return n, err
			}
			ops = append(ops, more...)
			n++
		}
		if err := flush(); err != nil {
			return n, err
		}
		if next == nil {
			return n, nil
		}
		offset = next
	}
}

// dateAll gives every point of a collection written before schema version
// 6 the days it was published on (from its year: it has no date) and the
// time it was added (now, unless it has one).
func (q *Store) dateAll(ctx context.Context) error {
	start, now := time.Now(), time.Now().UTC().Unix()
	n, err := q.rewrite(ctx, []string{fieldYear, fieldAdded}, func(pt *qc.RetrievedPoint) ([]*qc.PointsUpdateOperation, error) {
		pl := pt.GetPayload()
		set := daysPayload(papersearch.Paper{Year: int(pl[fieldYear].GetIntegerValue())})
		if set == nil {
			set = map[string]any{}
		}
		if pl[fieldAdded].GetIntegerValue() == 0 {
			set[fieldAdded] = now
		}
		payload, err := qc.TryValueMap(set)
		if err != nil || len(set) == 0 {
			return nil, err
		}
		return []*qc.PointsUpdateOperation{qc.NewPointsUpdateSetPayload(&qc.PointsUpdateOperation_SetPayload{Payload: payload,
			PointsSelector: qc.NewPointsSelector(pt.GetId())})}, nil
	})
	if err != nil {
		return fmt.Errorf("date the papers of qdrant collection %s: %w", q.coll, err)
	}
	q.log.Info("qdrant collection: papers dated (by their year) and counted as added now", "collection", q.coll, "papers", n,
		"took", time.Since(start).Round(time.Millisecond))
	return nil
}

// refold analyses every point of a collection written before schema
// version 8 again (accents folded since 5, apostrophe-joined name words
// since 8): its BM25 vector, analysed length and author name words (what the lexical side and the author filter read). An
// interrupted refold runs again at the next open: it rewrites each point
// from its own title, abstract and authors.
func (q *Store) refold(ctx context.Context) error {
	start := time.Now()
	n, err := q.rewrite(ctx, []string{fieldTitle, fieldAbstract, fieldAuthors}, func(pt *qc.RetrievedPoint) ([]*qc.PointsUpdateOperation, error) {
		pl := pt.GetPayload()
		paper := papersearch.Paper{Title: pl[fieldTitle].GetStringValue(), Abstract: pl[fieldAbstract].GetStringValue()}
		var names []any
		for _, a := range pl[fieldAuthors].GetListValue().GetValues() {
			names = append(names, strings.Join(storage.NameWords(a.GetStringValue()), " "))
		}
		terms := lexical.Analyze(paper.Text())
		payload, err := qc.TryValueMap(map[string]any{fieldAuthorNames: names, fieldDocLen: int64(len(terms))})
		if err != nil {
			return nil, err
		}
		return []*qc.PointsUpdateOperation{
			qc.NewPointsUpdateUpdateVectors(&qc.PointsUpdateOperation_UpdateVectors{Points: []*qc.PointVectors{{Id: pt.GetId(),
				Vectors: qc.NewVectorsMap(map[string]*qc.Vector{qdrantSparse: q.sparseBM25(terms)})}}}),
			qc.NewPointsUpdateSetPayload(&qc.PointsUpdateOperation_SetPayload{Payload: payload,
				PointsSelector: qc.NewPointsSelector(pt.GetId())}),
		}, nil
	})
	if err != nil {
		return fmt.Errorf("fold the accents of qdrant collection %s: %w", q.coll, err)
	}
	q.log.Info("qdrant collection: text analysed again with accents folded", "collection", q.coll, "papers", n,
		"took", time.Since(start).Round(time.Millisecond))
	return nil
}

// rekey makes every point's work keys again from its payload, as this
// version folds them.
func (q *Store) rekey(ctx context.Context) error {
	start := time.Now()
	n, err := q.rewrite(ctx, []string{fieldPaperID, fieldTitle, fieldAuthors, fieldSources}, func(pt *qc.RetrievedPoint) ([]*qc.PointsUpdateOperation, error) {
		payload, err := qc.TryValueMap(map[string]any{fieldWorkKeys: workKeysOf(documentOf(pt.GetPayload(), nil).Paper)})
		if err != nil {
			return nil, err
		}
		return []*qc.PointsUpdateOperation{qc.NewPointsUpdateSetPayload(&qc.PointsUpdateOperation_SetPayload{Payload: payload,
			PointsSelector: qc.NewPointsSelector(pt.GetId())})}, nil
	})
	if err != nil {
		return fmt.Errorf("make the work keys of qdrant collection %s again: %w", q.coll, err)
	}
	q.log.Info("qdrant collection: work keys made again", "collection", q.coll, "papers", n, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// ensureIndexes creates the payload indexes filters use, where missing.
func (q *Store) ensureIndexes(ctx context.Context) error {
	prefixText := qc.NewPayloadIndexParamsText(&qc.TextIndexParams{
		Tokenizer: qc.TokenizerType_Prefix, Lowercase: qc.PtrOf(true)})
	indexes := []struct {
		field  string
		typ    qc.FieldType
		params *qc.PayloadIndexParams
	}{
		{fieldPaperID, qc.FieldType_FieldTypeKeyword, nil},
		{fieldYear, qc.FieldType_FieldTypeInteger, nil},
		{fieldVenue, qc.FieldType_FieldTypeKeyword, nil},
		{fieldVenueKey, qc.FieldType_FieldTypeKeyword, nil},
		{fieldAuthors, qc.FieldType_FieldTypeKeyword, nil},
		{fieldTags, qc.FieldType_FieldTypeKeyword, nil},
		{fieldWorkKeys, qc.FieldType_FieldTypeKeyword, nil},
		{fieldAuthorNames, qc.FieldType_FieldTypeText, prefixText},
		{fieldDayFirst, qc.FieldType_FieldTypeInteger, nil},
		{fieldDayLast, qc.FieldType_FieldTypeInteger, nil},
		{fieldAdded, qc.FieldType_FieldTypeInteger, nil},
	}
	for _, ix := range indexes {
		_, err := q.client.CreateFieldIndex(ctx, &qc.CreateFieldIndexCollection{
			CollectionName: q.coll, FieldName: ix.field, FieldType: qc.PtrOf(ix.typ),
			FieldIndexParams: ix.params, Wait: qc.PtrOf(true),
		})
		if err != nil {
			return fmt.Errorf("index %s of qdrant collection %s: %w", ix.field, q.coll, err)
		}
	}
	return nil
}

// WaitOptimized returns once Qdrant reports the collection green: after a
// bulk load its optimizer merges and indexes segments for a while, and
// searches meanwhile are slower than in steady state. Benchmarks wait.
func (q *Store) WaitOptimized(ctx context.Context) error {
	for {
		info, err := q.client.GetCollectionInfo(ctx, q.coll)
		if err != nil {
			return fmt.Errorf("collection %s status: %w", q.coll, err)
		}
		if info.GetStatus() == qc.CollectionStatus_Green {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
