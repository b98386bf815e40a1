// Package qdrant is the storage.Store on a Qdrant server or cluster, over
// gRPC with the official Go client: dense vectors searched by HNSW and
// sparse BM25 vectors whose weights papersearch computes (see terms.go).
package qdrant

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"sync"
	"time"

	qc "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	grpcbackoff "google.golang.org/grpc/backoff"

	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/storage"
)

// Config configures the Qdrant store. Zero fields take the defaults
// named on each.
type Config struct {
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

// Quantizations a Config may ask for.
const (
	QuantizationNone = "none"
	QuantizationInt8 = "int8"
)

// schemaVersion is the layout of a collection's points (vectors and
// payload) that this build writes, recorded in the collection's metadata.
// Version 3 added each paper's sources and work keys; points written
// before have neither, and are found by their id alone. Version 4 marks
// sentence vectors pooled from each paper's encoder pass when the model
// can (the in-process one); points of a version 3 collection keep theirs,
// each sentence embedded on its own, until the paper is embedded again.
// Version 5 analyses text and author names with accents folded: opening
// an older collection analyses its points again (refold). Version 6 keeps
// each paper's date, the days it was published on and when it was added:
// opening an older collection gives its points those (dateAll), counting
// them as added then. Version 7 folds work keys by papersearch.Fold (ø, ł,
// ß, æ… spelled in ASCII): opening an older collection makes every
// point's again (rekey), which also gives the points of a version 2
// collection theirs. Version 8 keeps an author's name words that an
// apostrophe splits also whole (storage.NameWords: O'Brien's "obrien"):
// opening an older collection analyses its points again (refold).
const schemaVersion = 8

// DefaultCollection is the collection used when none is configured.
const DefaultCollection = "papers"

// DefaultAvgDocLen is the BM25 average document length of a new Qdrant
// collection, in analysed terms: about that of a title and abstract
// (SciFact's is 126, the ML papers' 112).
const DefaultAvgDocLen = 120

// Names of the collection's vector, its metadata keys and payload fields.
const (
	qdrantDense = "dense"
	// qdrantSentences is the multivector of a paper's sentences (MaxSim,
	// not indexed: aspect queries read it for the candidates they rank).
	qdrantSentences    = "sentences"
	fieldSentenceRoles = "sentence_roles"
	qdrantSparse       = "bm25"
	metaAvgDocLen      = "papersearch_avgdl"
	fieldVenueKey      = "venue_key"
	fieldAuthorNames   = "author_names"
	fieldDocLen        = "doc_len"
	metaModel          = "papersearch_model"
	metaDim            = "papersearch_dim"
	metaSchema         = "papersearch_schema"
	fieldPaperID       = "paper_id"
	fieldTitle         = "title"
	fieldAbstract      = "abstract"
	fieldAuthors       = "authors"
	fieldVenue         = "venue"
	fieldYear          = "year"
	fieldURL           = "url"
	fieldType          = "type" // absent from points written before papers had one: ""
	fieldTags          = "tags"
	fieldSources       = "sources"
	fieldWorkKeys      = "work_keys"
	fieldTextHash      = "text_hash"
	fieldPaperHash     = "paper_hash"
	fieldDate          = "date"
	fieldDayFirst      = "day_first" // storage.PaperDays; absent from a paper with no date and no year
	fieldDayLast       = "day_last"
	fieldAdded         = "added" // Unix seconds
	upsertSize         = 256
)

// Store is the storage.Store on a Qdrant server or cluster, over gRPC. Each paper
// is one point with a named dense vector (cosine) and the paper in its
// payload; year, venue, authors and the paper id are indexed. Writes wait
// until Qdrant has applied them; reads need one replica to answer, so a
// replicated collection keeps answering while a node is down.
type Store struct {
	client *qc.Client
	coll   string
	model  embed.ModelInfo
	log    *slog.Logger
	read   *qc.ReadConsistency
	// sentences is whether the collection has the sentences multivector
	// (collections created before it have not).
	sentences bool

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
	search *qc.SearchParams
	// records is the collection of the service's own state (records.go).
	records records

	// countMu guards the cached point count (see Count).
	countMu sync.Mutex
	count   int
	countAt time.Time // zero: no count cached

	// beforeWrite, set only by tests, is called before each request of an
	// Upsert with the place of its first document; an error fails that
	// request as Qdrant's would.
	beforeWrite func(start int) error
}

// Open connects to Qdrant and opens, or creates, the collection for
// vectors of model. A collection built with another model or dimension is
// refused with an error wrapping storage.ErrModelMismatch.
func Open(ctx context.Context, cfg Config, model embed.ModelInfo) (*Store, error) {
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
	client, err := qc.NewClient(&qc.Config{
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
	q := &Store{client: client, coll: cfg.Collection, model: model, log: log,
		read: qc.NewReadConsistencyFactor(1), records: records{replication: cfg.Replication},
		search: &qc.SearchParams{HnswEf: optional(cfg.HNSWEF),
			Quantization: &qc.QuantizationSearchParams{Rescore: qc.PtrOf(true)}}}
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

// optional is a pointer to v, or nil (Qdrant's default) for 0.
func optional[T uint32 | uint64](v T) *T {
	if v == 0 {
		return nil
	}
	return &v
}

// Kind returns "qdrant".
func (q *Store) Kind() string { return "qdrant" }

// Ping asks Qdrant for its collection, uncached (Count may answer from a
// count up to countTTL old, so a readiness probe said ready for 1.7 s
// after Qdrant died).
func (q *Store) Ping(ctx context.Context) (err error) {
	defer markUnavailable(&err)
	if _, err := q.client.GetCollectionInfo(ctx, q.coll); err != nil {
		return fmt.Errorf("qdrant collection %s: %w", q.coll, err)
	}
	return nil
}

// Model returns the model the collection's vectors come from.
func (q *Store) Model() embed.ModelInfo { return q.model }

// Collection returns the collection's name.
func (q *Store) Collection() string { return q.coll }

// Close closes the connection.
func (q *Store) Close() error { return q.client.Close() }

// Drop deletes the whole collection, and its records'. Tests use it to
// clean up.
func (q *Store) Drop(ctx context.Context) error {
	q.client.DeleteCollection(ctx, q.coll+recordsSuffix) // there may be none
	return q.client.DeleteCollection(ctx, q.coll)
}

var _ storage.Store = (*Store)(nil)
