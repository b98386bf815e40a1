package search

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/google/uuid"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	grpcbackoff "google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/lexical"
)

// QdrantConfig configures the Qdrant store. Zero fields take the defaults
// named on each.
type QdrantConfig struct {
	// URL is the gRPC endpoint, e.g. "http://127.0.0.1:6334"; https means
	// TLS. The port defaults to 6334.
	URL    string
	APIKey string
	// Collection is the collection's name (default "papers").
	Collection string
	// Shards and Replication apply when the collection is created
	// (defaults: Qdrant's own, one shard per node and replication 1).
	Shards      uint32
	Replication uint32
	// HNSWM and HNSWEFConstruct shape the dense HNSW graph of a new
	// collection (Qdrant's defaults: 16 and 100); larger values give better
	// recall for more memory and indexing time. HNSWEF is the search-time
	// beam (default: Qdrant's, which is at least the number of candidates
	// asked for).
	HNSWM, HNSWEFConstruct, HNSWEF uint64
	// OnDiskVectors keeps a new collection's dense vectors on disk (memory
	// mapped) instead of in RAM; OnDiskPayload the same for the payload.
	OnDiskVectors, OnDiskPayload bool
	// Quantization is "int8" (the default, for "") or "none": scalar
	// quantisation of a new collection's dense vectors, kept in RAM beside
	// the float32 ones (a quarter of their size), searched first and
	// rescored with the originals. On 29,100 papers it made similar-paper
	// requests 1.5x faster with the same SciFact figures to 4 decimals.
	Quantization string
	// AvgDocLen is the average analysed length of a document that BM25
	// normalises by, fixed when the collection is created (default
	// DefaultAvgDocLen); RefreshLexical updates it.
	AvgDocLen float64
	Logger    *slog.Logger
}

// Quantizations a QdrantConfig may ask for.
const (
	QuantizationNone = "none"
	QuantizationInt8 = "int8"
)

// collectionParams are the settings of a new collection from cfg.
func collectionParams(cfg QdrantConfig) (*qdrant.HnswConfigDiff, *qdrant.QuantizationConfig, error) {
	var hnsw *qdrant.HnswConfigDiff
	if cfg.HNSWM != 0 || cfg.HNSWEFConstruct != 0 {
		hnsw = &qdrant.HnswConfigDiff{M: optional(cfg.HNSWM), EfConstruct: optional(cfg.HNSWEFConstruct)}
	}
	switch cfg.Quantization {
	case QuantizationNone:
		return hnsw, nil, nil
	case QuantizationInt8, "":
		return hnsw, qdrant.NewQuantizationScalar(&qdrant.ScalarQuantization{
			Type: qdrant.QuantizationType_Int8, AlwaysRam: qdrant.PtrOf(true)}), nil
	}
	return nil, nil, fmt.Errorf("qdrant quantization %q: want none or int8", cfg.Quantization)
}

// DefaultCollection is the collection used when none is configured.
const DefaultCollection = "papers"

// DefaultAvgDocLen is the BM25 average document length of a new Qdrant
// collection, in analysed terms: about that of a title and abstract
// (SciFact's is 126, the ML papers' 112).
const DefaultAvgDocLen = 120

// Names of the collection's vector, its metadata keys and payload fields.
const (
	qdrantDense      = "dense"
	qdrantSparse     = "bm25"
	metaAvgDocLen    = "papersearch_avgdl"
	fieldVenueKey    = "venue_key"
	fieldAuthorNames = "author_names"
	fieldDocLen      = "doc_len"
	metaModel        = "papersearch_model"
	metaDim          = "papersearch_dim"
	metaSchema       = "papersearch_schema"
	fieldPaperID     = "paper_id"
	fieldTitle       = "title"
	fieldAbstract    = "abstract"
	fieldAuthors     = "authors"
	fieldVenue       = "venue"
	fieldYear        = "year"
	fieldURL         = "url"
	fieldTextHash    = "text_hash"
	fieldPaperHash   = "paper_hash"
	qdrantUpsertSize = 256
)

// pointNamespace derives point ids: UUIDv5 of the paper id in it.
var pointNamespace = uuid.MustParse("6f1d5c4e-8a0b-5b7e-9c3d-2e4f6a8b0c1d")

// pointID returns the Qdrant point id of a paper: a UUIDv5 of its id.
func pointID(paperID string) *qdrant.PointId {
	return qdrant.NewIDUUID(uuid.NewSHA1(pointNamespace, []byte(paperID)).String())
}

// Qdrant is the Store on a Qdrant server or cluster, over gRPC. Each paper
// is one point with a named dense vector (cosine) and the paper in its
// payload; year, venue, authors and the paper id are indexed. Writes wait
// until Qdrant has applied them; reads need one replica to answer, so a
// replicated collection keeps answering while a node is down.
type Qdrant struct {
	client *qdrant.Client
	coll   string
	model  embed.ModelInfo
	log    *slog.Logger
	read   *qdrant.ReadConsistency

	// lexMu guards the lexical statistics: avgdl, the BM25 average
	// document length the sparse vectors are weighted with, and the
	// document frequencies. Writes (Upsert, Delete, RefreshLexical) hold it
	// for their whole change, so no point is written with a length it is
	// not re-weighted from and the counts move with the points.
	lexMu sync.RWMutex
	avgdl float64
	terms termStats

	// search holds the dense search's parameters: the HNSW beam, and
	// rescoring of quantised candidates with the original vectors (Qdrant
	// ignores both where they do not apply). Candidates are not
	// oversampled: twice as many cost 1.4 ms of a similar request's 4, and
	// the 100 candidates' order near their end barely reaches the fused
	// top 10 (SciFact is the same to 4 decimals with and without int8).
	search *qdrant.SearchParams

	// countMu guards the cached point count (see Count).
	countMu sync.Mutex
	count   int
	countAt time.Time // zero: no count cached
}

// qdrantCountTTL is how long Count answers from its last exact count: every
// response carries the index's size, and an exact count costs Qdrant about
// 2 ms at 29,100 points, more than a dense search's share.
const qdrantCountTTL = 2 * time.Second

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
func (q *Qdrant) countTerms(ctx context.Context) error {
	start := time.Now()
	stats := termStats{df: map[uint32]int32{}}
	var offset *qdrant.PointId
	for {
		points, next, err := q.client.ScrollAndOffset(ctx, &qdrant.ScrollPoints{CollectionName: q.coll,
			Limit: qdrant.PtrOf(uint32(1000)), Offset: offset, WithPayload: qdrant.NewWithPayload(false),
			WithVectors: qdrant.NewWithVectorsInclude(qdrantSparse), ReadConsistency: q.read})
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
func sparseIndices(v *qdrant.VectorsOutput) []uint32 {
	sv := v.GetVectors().GetVectors()[qdrantSparse]
	if sv == nil {
		return nil
	}
	if s := sv.GetSparse(); s != nil {
		return s.GetIndices()
	}
	return sv.GetIndices().GetData()
}

// storedTerms returns the sparse indices of those of ids that exist, by
// point id.
func (q *Qdrant) storedTerms(ctx context.Context, ids []string) (map[string][]uint32, error) {
	pids := make([]*qdrant.PointId, len(ids))
	for i, id := range ids {
		pids[i] = pointID(id)
	}
	var points []*qdrant.RetrievedPoint
	err := retryUnavailable(ctx, func() (err error) {
		points, err = q.client.Get(ctx, &qdrant.GetPoints{CollectionName: q.coll, Ids: pids,
			WithPayload: qdrant.NewWithPayload(false), WithVectors: qdrant.NewWithVectorsInclude(qdrantSparse),
			ReadConsistency: q.read})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string][]uint32, len(points))
	for _, p := range points {
		out[p.GetId().GetUuid()] = sparseIndices(p.GetVectors())
	}
	return out, nil
}

// OpenQdrant connects to Qdrant and opens, or creates, the collection for
// vectors of model. A collection built with another model or dimension is
// refused with an error wrapping ErrModelMismatch.
func OpenQdrant(ctx context.Context, cfg QdrantConfig, model embed.ModelInfo) (*Qdrant, error) {
	if model.Name == "" || model.Dim <= 0 {
		return nil, fmt.Errorf("open qdrant store: invalid model %+v", model)
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Hostname() == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("qdrant URL %q: want http://host:port or https://host:port (the gRPC port, 6334 by default)", cfg.URL)
	}
	// The settings apply to a new collection only, but a wrong one is
	// refused whether or not the collection exists.
	if _, _, err := collectionParams(cfg); err != nil {
		return nil, err
	}
	port := 6334
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return nil, fmt.Errorf("qdrant URL %q: bad port", cfg.URL)
		}
	}
	if cfg.Collection == "" {
		cfg.Collection = DefaultCollection
	}
	if cfg.AvgDocLen <= 0 {
		cfg.AvgDocLen = DefaultAvgDocLen
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	client, err := qdrant.NewClient(&qdrant.Config{
		Host: u.Hostname(), Port: port, APIKey: cfg.APIKey, UseTLS: u.Scheme == "https",
		SkipCompatibilityCheck: true,
		// One connection (gRPC multiplexes concurrent calls on it), so a
		// call that succeeded — /readyz's — means every later call finds
		// the connection up; with the client's default pool of three, the
		// others could still be waiting out their reconnect backoff after
		// a Qdrant restart and fail the first write.
		PoolSize: 1,
		// Reconnect within a second of a restarted Qdrant answering again,
		// not after gRPC's default backoff of up to two minutes.
		GrpcOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           grpcbackoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: 2 * time.Second,
		})},
	})
	if err != nil {
		return nil, fmt.Errorf("connect to qdrant at %s: %w", cfg.URL, err)
	}
	q := &Qdrant{client: client, coll: cfg.Collection, model: model, log: log,
		read: qdrant.NewReadConsistencyFactor(1),
		search: &qdrant.SearchParams{HnswEf: optional(cfg.HNSWEF),
			Quantization: &qdrant.QuantizationSearchParams{Rescore: qdrant.PtrOf(true)}}}
	err = q.ensureCollection(ctx, cfg)
	if err == nil {
		err = q.countTerms(ctx)
	}
	if err != nil {
		client.Close()
		return nil, err
	}
	return q, nil
}

// sparseParams are the collection's settings of its BM25 sparse vector,
// nil if it has none.
func sparseParams(info *qdrant.CollectionInfo) *qdrant.SparseVectorParams {
	return info.GetConfig().GetParams().GetSparseVectorsConfig().GetMap()[qdrantSparse]
}

// dropQdrantIDF turns off Qdrant's own IDF on the sparse vectors of a
// collection created before papersearch weighed query terms itself. Qdrant
// computes IDF per shard, so lexical ranks depended on the shard count;
// the query now carries idf from this store's collection-wide document
// frequencies, as the embedded store's does, and Qdrant's must not apply
// on top. Setting it is idempotent, so concurrent openers agree.
func (q *Qdrant) dropQdrantIDF(ctx context.Context, info *qdrant.CollectionInfo) error {
	if params := sparseParams(info); params.GetModifier() != qdrant.Modifier_Idf {
		return nil
	}
	err := q.client.UpdateCollection(ctx, &qdrant.UpdateCollection{CollectionName: q.coll,
		SparseVectorsConfig: qdrant.NewSparseVectorsConfig(map[string]*qdrant.SparseVectorParams{
			qdrantSparse: {Modifier: qdrant.Modifier_None.Enum()},
		})})
	if err != nil {
		return fmt.Errorf("qdrant collection %s: turn off Qdrant's per-shard IDF: %w", q.coll, err)
	}
	// A cluster applies the change through consensus, after it answered:
	// wait until this node shows it, so no query weighs idf twice.
	_, err = backoff.Retry(ctx, func() (struct{}, error) {
		info, err := q.client.GetCollectionInfo(ctx, q.coll)
		if err != nil {
			return struct{}{}, err
		}
		p := sparseParams(info)
		if p == nil || p.GetModifier() != qdrant.Modifier_None {
			return struct{}{}, errors.New("the change is not applied yet")
		}
		return struct{}{}, nil
	}, backoff.WithMaxElapsedTime(30*time.Second))
	if err != nil {
		return fmt.Errorf("qdrant collection %s: turn off Qdrant's per-shard IDF: %w", q.coll, err)
	}
	q.log.Info("qdrant collection: lexical idf now from papersearch's document frequencies", "collection", q.coll)
	return nil
}

func (q *Qdrant) ensureCollection(ctx context.Context, cfg QdrantConfig) error {
	exists, err := q.client.CollectionExists(ctx, q.coll)
	if err != nil {
		return fmt.Errorf("qdrant at %s: %w", cfg.URL, err)
	}
	if !exists {
		hnsw, quant, err := collectionParams(cfg)
		if err != nil {
			return err
		}
		err = q.client.CreateCollection(ctx, &qdrant.CreateCollection{
			CollectionName: q.coll,
			VectorsConfig: qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{
				qdrantDense: {Size: uint64(q.model.Dim), Distance: qdrant.Distance_Cosine,
					OnDisk: qdrant.PtrOf(cfg.OnDiskVectors)},
			}),
			HnswConfig:         hnsw,
			QuantizationConfig: quant,
			OnDiskPayload:      qdrant.PtrOf(cfg.OnDiskPayload),
			SparseVectorsConfig: qdrant.NewSparseVectorsConfig(map[string]*qdrant.SparseVectorParams{
				qdrantSparse: {Modifier: qdrant.Modifier_None.Enum()},
			}),
			ShardNumber:       optional(cfg.Shards),
			ReplicationFactor: optional(cfg.Replication),
			Metadata: qdrant.NewValueMap(map[string]any{
				metaModel: q.model.Name, metaDim: int64(q.model.Dim), metaSchema: int64(schemaVersion),
				metaAvgDocLen: cfg.AvgDocLen,
			}),
		})
		if err != nil && status.Code(err) != codes.AlreadyExists {
			return fmt.Errorf("create qdrant collection %s: %w", q.coll, err)
		}
		if err == nil {
			q.log.Info("created qdrant collection", "collection", q.coll, "dim", q.model.Dim,
				"shards", cfg.Shards, "replication", cfg.Replication, "hnsw_m", cfg.HNSWM, "hnsw_ef_construct", cfg.HNSWEFConstruct,
				"on_disk_vectors", cfg.OnDiskVectors, "on_disk_payload", cfg.OnDiskPayload, "quantization", cfg.Quantization)
		}
	}
	// A collection just created, or whose creation a crash interrupted, may
	// not answer until the cluster has set up its shards.
	info, err := backoff.Retry(ctx, func() (*qdrant.CollectionInfo, error) {
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
	meta := info.GetConfig().GetMetadata()
	name := meta[metaModel].GetStringValue()
	dim := int(meta[metaDim].GetIntegerValue())
	if name == "" {
		return fmt.Errorf("qdrant collection %s was not created by papersearch (no model recorded); choose another PAPERSEARCH_COLLECTION", q.coll)
	}
	if err := sameModel("qdrant collection "+q.coll, embed.ModelInfo{Name: name, Dim: dim}, q.model); err != nil {
		return err
	}
	q.avgdl = meta[metaAvgDocLen].GetDoubleValue()
	if q.avgdl <= 0 {
		q.avgdl = DefaultAvgDocLen
	}
	return nil
}

// ensureIndexes creates the payload indexes filters use, where missing.
func (q *Qdrant) ensureIndexes(ctx context.Context) error {
	prefixText := qdrant.NewPayloadIndexParamsText(&qdrant.TextIndexParams{
		Tokenizer: qdrant.TokenizerType_Prefix, Lowercase: qdrant.PtrOf(true)})
	indexes := []struct {
		field  string
		typ    qdrant.FieldType
		params *qdrant.PayloadIndexParams
	}{
		{fieldPaperID, qdrant.FieldType_FieldTypeKeyword, nil},
		{fieldYear, qdrant.FieldType_FieldTypeInteger, nil},
		{fieldVenue, qdrant.FieldType_FieldTypeKeyword, nil},
		{fieldVenueKey, qdrant.FieldType_FieldTypeKeyword, nil},
		{fieldAuthors, qdrant.FieldType_FieldTypeKeyword, nil},
		{fieldAuthorNames, qdrant.FieldType_FieldTypeText, prefixText},
	}
	for _, ix := range indexes {
		_, err := q.client.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{
			CollectionName: q.coll, FieldName: ix.field, FieldType: qdrant.PtrOf(ix.typ),
			FieldIndexParams: ix.params, Wait: qdrant.PtrOf(true),
		})
		if err != nil {
			return fmt.Errorf("index %s of qdrant collection %s: %w", ix.field, q.coll, err)
		}
	}
	return nil
}

// sparseTerm maps an analysed term to its sparse vector index.
func sparseTerm(term string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(term))
	return h.Sum32()
}

// sparseBM25 is a document's BM25 term weights (without IDF, which Qdrant
// applies) as a sparse vector. The caller holds q.lexMu.
func (q *Qdrant) sparseBM25(terms []string) *qdrant.Vector {
	counts := lexical.TermCounts(terms)
	idx := make([]uint32, 0, len(counts))
	val := make([]float32, 0, len(counts))
	for t, tf := range counts {
		idx = append(idx, sparseTerm(t))
		val = append(val, float32(lexical.TFWeight(tf, len(terms), q.avgdl)))
	}
	return qdrant.NewVectorSparse(idx, val)
}

// filterOf translates a Filter into Qdrant conditions.
func filterOf(f papersearch.Filter) *qdrant.Filter {
	if filterEmpty(f) {
		return nil
	}
	var must, mustNot []*qdrant.Condition
	if f.YearMin != 0 || f.YearMax != 0 {
		r := &qdrant.Range{}
		if f.YearMin != 0 {
			r.Gte = qdrant.PtrOf(float64(f.YearMin))
		}
		if f.YearMax != 0 {
			r.Lte = qdrant.PtrOf(float64(f.YearMax))
		}
		must = append(must, qdrant.NewRange(fieldYear, r))
	}
	if len(f.Venues) > 0 {
		keys := make([]string, len(f.Venues))
		for i, v := range f.Venues {
			keys[i] = venueKey(v)
		}
		must = append(must, qdrant.NewMatchKeywords(fieldVenueKey, keys...))
	}
	if words := authorWords(f.Author); len(words) > 0 {
		must = append(must, qdrant.NewMatchText(fieldAuthorNames, strings.Join(words, " ")))
	}
	if len(f.Exclude) > 0 {
		pids := make([]*qdrant.PointId, len(f.Exclude))
		for i, id := range f.Exclude {
			pids[i] = pointID(id)
		}
		mustNot = append(mustNot, qdrant.NewHasID(pids...))
	}
	return &qdrant.Filter{Must: must, MustNot: mustNot}
}

// optional is a pointer to v, or nil (Qdrant's default) for 0.
func optional[T uint32 | uint64](v T) *T {
	if v == 0 {
		return nil
	}
	return &v
}

// Kind returns "qdrant".
func (q *Qdrant) Kind() string { return "qdrant" }

// Model returns the model the collection's vectors come from.
func (q *Qdrant) Model() embed.ModelInfo { return q.model }

// Collection returns the collection's name.
func (q *Qdrant) Collection() string { return q.coll }

// Close closes the connection.
func (q *Qdrant) Close() error { return q.client.Close() }

// Drop deletes the whole collection. Tests use it to clean up.
func (q *Qdrant) Drop(ctx context.Context) error { return q.client.DeleteCollection(ctx, q.coll) }

// Upsert writes docs in batches, each acknowledged once Qdrant applied it.
func (q *Qdrant) Upsert(ctx context.Context, docs []Document) (err error) {
	defer markUnavailable(&err)
	defer q.forgetCount()
	for _, d := range docs {
		if len(d.Vector) != q.model.Dim {
			return fmt.Errorf("upsert %s: %w: %d, want %d", d.Paper.ID, ErrDimension, len(d.Vector), q.model.Dim)
		}
	}
	q.lexMu.Lock()
	defer q.lexMu.Unlock()
	for start := 0; start < len(docs); start += qdrantUpsertSize {
		batch := docs[start:min(start+qdrantUpsertSize, len(docs))]
		points := make([]*qdrant.PointStruct, len(batch))
		ids, added := make([]string, len(batch)), make([][]uint32, len(batch))
		for i, d := range batch {
			ids[i] = d.Paper.ID
		}
		old, err := q.storedTerms(ctx, ids)
		if err != nil {
			return fmt.Errorf("upsert %d papers into qdrant: read their terms: %w", len(batch), err)
		}
		for i, d := range batch {
			terms := d.analysed()
			payload, err := qdrant.TryValueMap(payloadOf(d, len(terms)))
			if err != nil {
				return fmt.Errorf("upsert %s: payload: %w", d.Paper.ID, err)
			}
			sparse := q.sparseBM25(terms)
			added[i] = sparse.GetSparse().GetIndices()
			points[i] = &qdrant.PointStruct{
				Id: pointID(d.Paper.ID),
				Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{
					qdrantDense:  qdrant.NewVectorDense(d.Vector),
					qdrantSparse: sparse,
				}),
				Payload: payload,
			}
		}
		err = retryUnavailable(ctx, func() error {
			_, err := q.client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: q.coll, Wait: qdrant.PtrOf(true), Points: points})
			return err
		})
		if err != nil {
			q.terms.stale = true // some of the batch may have been applied
			return fmt.Errorf("upsert %d papers into qdrant: %w", len(batch), err)
		}
		for i, p := range points {
			if idx, ok := old[p.GetId().GetUuid()]; ok {
				q.terms.add(idx, -1)
			}
			q.terms.add(added[i], 1)
		}
	}
	return nil
}

func payloadOf(d Document, docLen int) map[string]any {
	authors := make([]any, len(d.Paper.Authors))
	names := make([]any, len(d.Paper.Authors))
	for i, a := range d.Paper.Authors {
		authors[i] = a
		names[i] = strings.Join(authorWords(a), " ")
	}
	return map[string]any{
		fieldPaperID: d.Paper.ID, fieldTitle: d.Paper.Title, fieldAbstract: d.Paper.Abstract,
		fieldAuthors: authors, fieldVenue: d.Paper.Venue, fieldYear: int64(d.Paper.Year), fieldURL: d.Paper.URL,
		fieldTextHash: d.TextHash, fieldPaperHash: d.PaperHash,
		fieldVenueKey: venueKey(d.Paper.Venue), fieldAuthorNames: names,
		fieldDocLen: int64(docLen),
	}
}

func documentOf(payload map[string]*qdrant.Value, vectors *qdrant.VectorsOutput) Document {
	str := func(k string) string { return payload[k].GetStringValue() }
	var authors []string
	for _, v := range payload[fieldAuthors].GetListValue().GetValues() {
		authors = append(authors, v.GetStringValue())
	}
	if authors == nil {
		authors = []string{}
	}
	d := Document{
		Paper: papersearch.Paper{ID: str(fieldPaperID), Title: str(fieldTitle), Abstract: str(fieldAbstract),
			Authors: authors, Venue: str(fieldVenue), Year: int(payload[fieldYear].GetIntegerValue()), URL: str(fieldURL)},
		TextHash:  str(fieldTextHash),
		PaperHash: str(fieldPaperHash),
	}
	if v := vectors.GetVectors().GetVectors()[qdrantDense]; v != nil {
		d.Vector = append([]float32(nil), v.GetDense().GetData()...)
		if len(d.Vector) == 0 {
			d.Vector = append([]float32(nil), v.GetData()...)
		}
	}
	return d
}

// get fetches points by paper id, with or without vectors.
func (q *Qdrant) get(ctx context.Context, ids []string, vectors bool) ([]Document, error) {
	pids := make([]*qdrant.PointId, len(ids))
	for i, id := range ids {
		pids[i] = pointID(id)
	}
	points, err := q.client.Get(ctx, &qdrant.GetPoints{
		CollectionName: q.coll, Ids: pids, WithPayload: qdrant.NewWithPayload(true),
		WithVectors: qdrant.NewWithVectors(vectors), ReadConsistency: q.read,
	})
	if err != nil {
		return nil, err
	}
	docs := make([]Document, 0, len(points))
	for _, p := range points {
		docs = append(docs, documentOf(p.GetPayload(), p.GetVectors()))
	}
	return docs, nil
}

// Get returns one document.
func (q *Qdrant) Get(ctx context.Context, id string) (_ Document, err error) {
	defer markUnavailable(&err)
	docs, err := q.get(ctx, []string{id}, true)
	if err != nil {
		return Document{}, fmt.Errorf("get %q: %w", id, err)
	}
	if len(docs) == 0 {
		return Document{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return docs[0], nil
}

// Lookup returns the papers of those ids that exist, in one request.
func (q *Qdrant) Lookup(ctx context.Context, ids []string) (_ map[string]papersearch.Paper, err error) {
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

// Fingerprints returns the stored hashes of the ids that exist.
func (q *Qdrant) Fingerprints(ctx context.Context, ids []string) (_ map[string]Fingerprint, err error) {
	defer markUnavailable(&err)
	out := make(map[string]Fingerprint, len(ids))
	for start := 0; start < len(ids); start += 1000 {
		docs, err := q.get(ctx, ids[start:min(start+1000, len(ids))], false)
		if err != nil {
			return nil, fmt.Errorf("fingerprints: %w", err)
		}
		for _, d := range docs {
			out[d.Paper.ID] = Fingerprint{TextHash: d.TextHash, PaperHash: d.PaperHash}
		}
	}
	return out, nil
}

// Nearest asks Qdrant for the k nearest allowed points by cosine similarity.
func (q *Qdrant) Nearest(ctx context.Context, v []float32, k int, f papersearch.Filter) (_ []Candidate, err error) {
	defer markUnavailable(&err)
	if len(v) != q.model.Dim {
		return nil, fmt.Errorf("nearest: %w: %d, want %d", ErrDimension, len(v), q.model.Dim)
	}
	out, err := q.query(ctx, qdrant.NewQueryDense(v), qdrantDense, k, f)
	if err != nil {
		return nil, fmt.Errorf("nearest: %w", err)
	}
	return out, nil
}

// NearestTo is Nearest from the stored vector of id, which Qdrant reads
// itself: one request, where Get then Nearest took two.
func (q *Qdrant) NearestTo(ctx context.Context, id string, k int, f papersearch.Filter) (_ []Candidate, err error) {
	defer markUnavailable(&err)
	out, err := q.query(ctx, qdrant.NewQueryID(pointID(id)), qdrantDense, k, f)
	if status.Code(err) == codes.NotFound || status.Code(err) == codes.InvalidArgument && strings.Contains(err.Error(), "Not found") {
		return nil, fmt.Errorf("nearest to %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("nearest to %q: %w", id, err)
	}
	return out, nil
}

// Lexical asks Qdrant for the k best allowed points by BM25: the query's
// term counts times idf, from this store's collection-wide document
// frequencies, against the documents' BM25 term weights. It is the
// embedded store's score, on any number of shards.
func (q *Qdrant) Lexical(ctx context.Context, terms []string, k int, f papersearch.Filter) (_ Matches, err error) {
	defer markUnavailable(&err)
	scored, ideal, err := q.weigh(ctx, terms)
	if err != nil || len(scored) == 0 {
		return Matches{Ideal: ideal}, err
	}
	idx := make([]uint32, len(scored))
	val := make([]float32, len(scored))
	for i, t := range scored {
		idx[i], val[i] = sparseTerm(t.Term), float32(t.Weight) // query tf × idf
	}
	out, err := q.query(ctx, qdrant.NewQuerySparse(idx, val), qdrantSparse, k, f)
	if err != nil {
		return Matches{}, fmt.Errorf("lexical: %w", err)
	}
	return Matches{Candidates: out, Ideal: ideal}, nil
}

// weigh reads a lexical query as the embedded store does (see weighTerms),
// with this collection's document frequencies, counting them first if a
// write left them uncertain.
func (q *Qdrant) weigh(ctx context.Context, terms []string) ([]lexical.WeightedTerm, float64, error) {
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

func (q *Qdrant) query(ctx context.Context, query *qdrant.Query, using string, k int, f papersearch.Filter) ([]Candidate, error) {
	points, err := q.client.Query(ctx, &qdrant.QueryPoints{
		CollectionName: q.coll, Query: query, Using: qdrant.PtrOf(using),
		Filter: filterOf(f), Limit: qdrant.PtrOf(uint64(k)), WithPayload: qdrant.NewWithPayloadInclude(fieldPaperID),
		ReadConsistency: q.read, Params: q.search,
	})
	if err != nil {
		return nil, err
	}
	out := make([]Candidate, len(points))
	for i, p := range points {
		out[i] = Candidate{ID: p.GetPayload()[fieldPaperID].GetStringValue(), Score: p.GetScore()}
	}
	return out, nil
}

// Delete removes one document.
func (q *Qdrant) Delete(ctx context.Context, id string) (err error) {
	defer markUnavailable(&err)
	defer q.forgetCount()
	q.lexMu.Lock()
	defer q.lexMu.Unlock()
	old, err := q.storedTerms(ctx, []string{id})
	if err != nil {
		return fmt.Errorf("delete %q: %w", id, err)
	}
	idx, ok := old[pointID(id).GetUuid()]
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	err = retryUnavailable(ctx, func() error {
		_, err := q.client.Delete(ctx, &qdrant.DeletePoints{CollectionName: q.coll, Wait: qdrant.PtrOf(true),
			Points: qdrant.NewPointsSelector(pointID(id))})
		return err
	})
	if err != nil {
		q.terms.stale = true
		return fmt.Errorf("delete %q: %w", id, err)
	}
	q.terms.add(idx, -1)
	return nil
}

// Count returns the number of documents: an exact count, reused for up to
// qdrantCountTTL, and counted again after each write by this process. So it
// is exact for this process's own writes and at most qdrantCountTTL behind
// other writers'.
func (q *Qdrant) Count(ctx context.Context) (_ int, err error) {
	defer markUnavailable(&err)
	q.countMu.Lock()
	defer q.countMu.Unlock()
	if !q.countAt.IsZero() && time.Since(q.countAt) < qdrantCountTTL {
		return q.count, nil
	}
	n, err := q.client.Count(ctx, &qdrant.CountPoints{CollectionName: q.coll, Exact: qdrant.PtrOf(true)})
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

// WaitOptimized returns once Qdrant reports the collection green: after a
// bulk load its optimizer merges and indexes segments for a while, and
// searches meanwhile are slower than in steady state. Benchmarks wait.
func (q *Qdrant) WaitOptimized(ctx context.Context) error {
	for {
		info, err := q.client.GetCollectionInfo(ctx, q.coll)
		if err != nil {
			return fmt.Errorf("collection %s status: %w", q.coll, err)
		}
		if info.GetStatus() == qdrant.CollectionStatus_Green {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// forgetCount drops the cached count after a write.
func (q *Qdrant) forgetCount() {
	q.countMu.Lock()
	q.countAt = time.Time{}
	q.countMu.Unlock()
}

// Scroll pages through documents in point-id order; the cursor is the next
// page's first point id.
func (q *Qdrant) Scroll(ctx context.Context, cursor string, limit int) (_ []Document, _ string, err error) {
	defer markUnavailable(&err)
	req := &qdrant.ScrollPoints{CollectionName: q.coll, Limit: qdrant.PtrOf(uint32(limit)),
		WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectors(true), ReadConsistency: q.read}
	if cursor != "" {
		if _, err := uuid.Parse(cursor); err != nil {
			return nil, "", fmt.Errorf("scroll: invalid cursor %q", cursor)
		}
		req.Offset = qdrant.NewIDUUID(cursor)
	}
	points, next, err := q.client.ScrollAndOffset(ctx, req)
	if err != nil {
		return nil, "", fmt.Errorf("scroll: %w", err)
	}
	docs := make([]Document, len(points))
	for i, p := range points {
		docs[i] = documentOf(p.GetPayload(), p.GetVectors())
	}
	return docs, next.GetUuid(), nil
}

var _ Store = (*Qdrant)(nil)

// avgDocLenDrift is how far the collection's true average document length
// may drift from the one its BM25 weights were computed with before
// RefreshLexical re-weights every point.
const avgDocLenDrift = 0.01

// RefreshLexical keeps BM25's length normalisation true to the collection:
// when the average analysed length of its papers has drifted more than 1%
// from the one the sparse weights were computed with, it recomputes every
// point's weights and records the new average. Ingest calls it when done.
func (q *Qdrant) RefreshLexical(ctx context.Context) (err error) {
	defer markUnavailable(&err)
	q.lexMu.Lock()
	defer q.lexMu.Unlock()
	var total, n int64
	scroll := func(withPayload *qdrant.WithPayloadSelector, fn func(*qdrant.RetrievedPoint) error) error {
		var offset *qdrant.PointId
		for {
			points, next, err := q.client.ScrollAndOffset(ctx, &qdrant.ScrollPoints{CollectionName: q.coll,
				Limit: qdrant.PtrOf(uint32(1000)), Offset: offset, WithPayload: withPayload, ReadConsistency: q.read})
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
	err = scroll(qdrant.NewWithPayloadInclude(fieldDocLen), func(p *qdrant.RetrievedPoint) error {
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
	var batch []*qdrant.PointVectors
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, err := q.client.UpdateVectors(ctx, &qdrant.UpdatePointVectors{CollectionName: q.coll, Wait: qdrant.PtrOf(true), Points: batch})
		batch = batch[:0]
		return err
	}
	err = scroll(qdrant.NewWithPayloadInclude(fieldTitle, fieldAbstract), func(p *qdrant.RetrievedPoint) error {
		paper := papersearch.Paper{Title: p.GetPayload()[fieldTitle].GetStringValue(), Abstract: p.GetPayload()[fieldAbstract].GetStringValue()}
		batch = append(batch, &qdrant.PointVectors{Id: p.GetId(),
			Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{qdrantSparse: q.sparseBM25(lexical.Analyze(paper.Text()))})})
		if len(batch) == 256 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err == nil {
		err = q.client.UpdateCollection(ctx, &qdrant.UpdateCollection{CollectionName: q.coll,
			Metadata: qdrant.NewValueMap(map[string]any{metaAvgDocLen: avg})})
	}
	if err != nil {
		q.avgdl = old
		return fmt.Errorf("refresh lexical weights: %w", err)
	}
	return nil
}

// markUnavailable wraps an error that means Qdrant cannot be reached now
// (gRPC Unavailable) with ErrUnavailable, so the API answers 503 with
// Retry-After instead of 500.
func markUnavailable(err *error) {
	if isUnavailable(*err) {
		*err = fmt.Errorf("%w: qdrant: %w", ErrUnavailable, *err)
	}
}

// isUnavailable reports whether err, or an error it wraps, is gRPC's
// Unavailable.
func isUnavailable(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if s, ok := status.FromError(err); ok && s.Code() == codes.Unavailable {
			return true
		}
	}
	return false
}

// qdrantWriteRetry bounds how long a write (and the read it starts with) is
// retried while Qdrant is unreachable, so the first write after a restart
// succeeds.
const qdrantWriteRetry = 3 * time.Second

// retryUnavailable runs an idempotent call, retrying it with backoff while
// Qdrant answers Unavailable, for at most qdrantWriteRetry and within ctx.
func retryUnavailable(ctx context.Context, call func() error) error {
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		err := call()
		if err != nil && !isUnavailable(err) {
			return struct{}{}, backoff.Permanent(err)
		}
		return struct{}{}, err
	}, backoff.WithBackOff(&backoff.ExponentialBackOff{InitialInterval: 50 * time.Millisecond,
		RandomizationFactor: 0.2, Multiplier: 2, MaxInterval: time.Second}),
		backoff.WithMaxElapsedTime(qdrantWriteRetry))
	return err
}
