package search

import (
	"cmp"
	"context"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/roles"
	"github.com/papersearch/papersearch/search/storage"
)

// Limits on a query.
const (
	DefaultLimit = 10
	MaxLimit     = 100
	// MaxQueryLength bounds free-text query length, in characters (Unicode
	// code points), as JSON Schema's maxLength counts.
	MaxQueryLength = 4096
	// CandidateDepth is how many candidates each retrieval contributes to
	// fusion.
	CandidateDepth = 100
	// MaxExamples bounds the like and unlike paper ids of a query.
	MaxExamples = 20
	// MaxTags bounds the collections Collections reports.
	MaxTags = 10000
)

// Engine answers free-text and similar-paper queries over a Store, embedding
// query text with the same Embedder the documents were embedded with.
type Engine struct {
	store observedStore
	// embedder embeds texts as given (the OpenAI-compatible endpoint);
	// docs embeds papers and their sentences as documents, with the model's
	// document instructions (embed.Instructed).
	embedder, docs embed.Embedder
	// inContext embeds papers in parts (their sentences pooled from the
	// paper's encoder pass) when the model can and Options allow; else nil.
	inContext embed.PartEmbedder
	// byModel are the embedders Embed answers for, as given (observed): the
	// index's first, then, for a pair, each of its models.
	byModel []embed.Embedder
	// coreDim and models: see coreDim (ModelGate).
	coreDim, models int
	// encoders is the arithmetic and kernel of each local model the
	// embedder runs (none for a remote one).
	encoders map[string]embed.Choice
	log      *slog.Logger
	opts     Options
	queries  *lru.Cache[string, []float32] // recent query vectors by text
	breaker  *embedBreaker
	roles    *roles.Classifier // labels abstracts' sentences
	lanes    *lanes            // queries go first (see Background)
}

// Options tune an Engine. The zero value is a working default.
type Options struct {
	Logger *slog.Logger
	// Fusion merges dense and lexical results (default DefaultFusion).
	Fusion *Fusion
	// ModelGate says which models of a store of several compare a query
	// with the papers (default DefaultModelGate).
	ModelGate *ModelGate
	// QueryCacheSize is how many recent query vectors are kept (default 1024).
	QueryCacheSize int
	// EmbedMaxTokens bounds the tokens of one Embed call's distinct texts
	// (default DefaultEmbedMaxTokens; negative: no bound).
	EmbedMaxTokens int
	// CursorKey signs the cursors the engine issues and checks the ones it
	// is given (HMAC-SHA256); engines that share it accept each other's
	// cursors. Default: a random key, so cursors last as long as the engine.
	CursorKey []byte
	// QueryTimeout bounds embedding one query (default 5s).
	QueryTimeout time.Duration
	// RawQueries embeds free-text queries as typed. By default a query gets
	// the embedding model's query instruction first, if it has one
	// (embed.Instructed); papers always get their document instruction.
	RawQueries bool
	// BreakerCooldown is how long searches skip query embedding, and
	// writes that need embedding are refused, once the embedder is found
	// failing (see BreakerFailures), before a background probe may turn
	// it on again (default DefaultBreakerCooldown).
	BreakerCooldown time.Duration
	// research are the knobs the dev signals compare and no user sets
	// (see WithResearch in the package's tests).
	research research
	// Observe, if set, is told the duration and outcome of every embedding
	// call and store operation, named by one of Ops, for metrics.
	Observe func(op string, d time.Duration, err error)
}

// research are the engine's research knobs: ways of ranking measured
// against the defaults on the dev signals (docs/ranking.md), kept so the
// measurements can be run again, and out of Options so that no user
// mistakes them for settings.
type research struct {
	// AspectMatch is how aspect similarity scores a paper from the best
	// matches of the query's sentences: MatchBest (the default) or MatchSum.
	AspectMatch string
	// AspectWhole is the weight, from 0 to 1, of the whole-paper cosine
	// similarity in an aspect score, beside the sentences' matches
	// (default 0: the sentences alone).
	AspectWhole float64
	// AspectFusion merges, for an aspect query in hybrid mode, the ranking
	// by sentence matches with the BM25 ranking of the same candidates for
	// the words of the query's sentences (default DefaultAspectFusion).
	AspectFusion *Fusion
	// AspectDepth is how many papers an aspect query ranks (default
	// DefaultAspectDepth).
	AspectDepth int
	// AspectSameRole matches an aspect query's sentences only with the
	// candidates' sentences of the same role (those it has; all when it has
	// none). By default they are matched with all of a candidate's
	// sentences: on the dev signal that ranked better overall, the roles
	// labelled on the candidates' side being wrong one time in five.
	AspectSameRole bool
	// SeparateSentences embeds each abstract sentence as a text of its own
	// even when the model can pool sentence vectors from the paper's single
	// encoder pass (embed.PartEmbedder), which it does by default.
	SeparateSentences bool
}

// The operations Options.Observe is told of.
const (
	OpEmbed   = "embed"
	OpNearest = "nearest"
	OpLexical = "lexical"
	OpLookup  = "lookup"
	OpGet     = "get"
	OpUpsert  = "upsert"
	OpCount   = "count"
)

// Ops lists every operation Options.Observe is told of, so metrics can
// show each one from the start.
func Ops() []string {
	return []string{OpEmbed, OpNearest, OpLexical, OpLookup, OpGet, OpUpsert, OpCount}
}

// Defaults of Options.
const (
	DefaultQueryCacheSize = 1024
	DefaultQueryTimeout   = 5 * time.Second
)

// composite is an embedder made of models each answering on its own (an
// embed.Pair): the engine also embeds with each of them by name.
type composite interface {
	Parts() []embed.Embedder
}

// NewEngine returns an Engine over store. The embedder must produce the
// vectors the store holds.
func NewEngine(store storage.Store, embedder embed.Embedder, opts Options) (*Engine, error) {
	if err := storage.CheckModel("the index", store.Model(), embedder.Info()); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.QueryCacheSize <= 0 {
		opts.QueryCacheSize = DefaultQueryCacheSize
	}
	if opts.QueryTimeout <= 0 {
		opts.QueryTimeout = DefaultQueryTimeout
	}
	if opts.BreakerCooldown <= 0 {
		opts.BreakerCooldown = DefaultBreakerCooldown
	}
	if opts.Fusion == nil {
		opts.Fusion = &DefaultFusion
	}
	if opts.research.AspectFusion == nil {
		opts.research.AspectFusion = &DefaultAspectFusion
	}
	if opts.ModelGate == nil {
		opts.ModelGate = &DefaultModelGate
	}
	if opts.EmbedMaxTokens == 0 {
		opts.EmbedMaxTokens = DefaultEmbedMaxTokens
	}
	if len(opts.CursorKey) == 0 {
		opts.CursorKey = newCursorKey()
	}
	if opts.Observe == nil {
		opts.Observe = func(string, time.Duration, error) {}
	}
	measured := observedStore{Store: store, observe: opts.Observe, writes: newChanges()}
	queries := embedder
	if !opts.RawQueries {
		queries = embed.Instructed(embedder, embed.Query)
	}
	observed := func(e embed.Embedder) embed.Embedder { return observedEmbedder{Embedder: e, observe: opts.Observe} }
	cache, err := lru.New[string, []float32](opts.QueryCacheSize)
	if err != nil {
		return nil, err
	}
	byModel := []embed.Embedder{observed(embedder)}
	if p, ok := embedder.(composite); ok {
		for _, m := range p.Parts() {
			byModel = append(byModel, observed(m))
		}
	}
	labeller, err := roles.New()
	if err != nil {
		return nil, err
	}
	docs := embed.Instructed(embedder, embed.Document)
	inContext, ok := embed.AsPartEmbedder(docs)
	if !ok || opts.research.SeparateSentences {
		inContext = nil
	}
	dim, models := coreDim(byModel, *opts.ModelGate)
	return &Engine{store: measured, embedder: byModel[0], docs: observed(docs), inContext: inContext, roles: labeller,
		byModel: byModel, coreDim: dim, models: models, encoders: embed.Choices(embedder), log: opts.Logger, opts: opts, queries: cache, lanes: new(lanes),
		breaker: newEmbedBreaker(observed(queries), opts.QueryTimeout, opts.BreakerCooldown, opts.Logger)}, nil
}

// Model names the embedding model of the index.
func (e *Engine) Model() embed.ModelInfo { return e.store.Model() }

// Ping reports whether the store answers now (see Store.Ping).
func (e *Engine) Ping(ctx context.Context) error { return e.store.Ping(ctx) }

// Encoders returns, by model name, the arithmetic and kernel each local
// model of the engine's embedder runs, and what was measured to choose
// them; empty for a remote embedder.
func (e *Engine) Encoders() map[string]embed.Choice { return e.encoders }

// Index describes the index the engine serves.
func (e *Engine) Index(ctx context.Context) (papersearch.IndexInfo, error) {
	n, err := e.store.Count(ctx)
	if err != nil {
		return papersearch.IndexInfo{}, err
	}
	m := e.store.Model()
	return papersearch.IndexInfo{Store: e.store.Kind(), Model: m.Name, Dim: m.Dim, Papers: n}, nil
}

// queryVector embeds a query within the query deadline, behind the circuit
// breaker, remembering recent ones. Cached vectors are shared and must not
// be modified.
func (e *Engine) queryVector(ctx context.Context, text string) ([]float32, error) {
	if v, ok := e.queries.Get(text); ok {
		return v, nil
	}
	v, err := e.breaker.query(ctx, text)
	if err != nil {
		return nil, err
	}
	e.queries.Add(text, v)
	return v, nil
}

// Collections lists every tag the stored papers hold with how many hold
// it and how many are marked not interested for it, by name; past
// MaxTags, the most held. The marks themselves (not.<tag>) are not
// collections.
func (e *Engine) Collections(ctx context.Context) ([]papersearch.Collection, error) {
	defer e.lanes.foreground()()
	counts, err := e.store.Tags(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]papersearch.Collection, 0, len(counts))
	for tag, n := range counts {
		if strings.HasPrefix(tag, papersearch.NotInterestedTag("")) {
			continue // a mark on another collection's papers, counted with it
		}
		out = append(out, papersearch.Collection{Tag: tag, Papers: n, NotInterested: counts[papersearch.NotInterestedTag(tag)]})
	}
	if len(out) > MaxTags {
		slices.SortFunc(out, func(a, b papersearch.Collection) int { return cmp.Or(b.Papers-a.Papers, strings.Compare(a.Tag, b.Tag)) })
		out = out[:MaxTags]
	}
	slices.SortFunc(out, func(a, b papersearch.Collection) int { return strings.Compare(a.Tag, b.Tag) })
	return out, nil
}

// Store returns the engine's store as the engine observes it: writes
// through it are measured (Options.Observe) and noted for the map. The
// catalog writes through it; the engine itself only reads.
func (e *Engine) Store() storage.Store { return e.store }

// Changes are the papers written and deleted through Store since a point.
func (e *Engine) Changes() *Changes { return e.store.writes }

// lanes let an Engine's queries go first: background work (imports,
// seeding; see Engine.Background) waits at the encoder's checkpoints while
// any query is being answered, so that a long import costs a search little
// of its latency on a local model.
type lanes struct {
	mu    sync.Mutex
	fore  int           // queries being answered
	clear chan struct{} // closed when fore falls to 0
}

// foreground records a query until done is called.
func (l *lanes) foreground() (done func()) {
	l.mu.Lock()
	if l.fore == 0 {
		l.clear = make(chan struct{})
	}
	l.fore++
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.fore--
		if l.fore == 0 {
			close(l.clear)
		}
	}
}

// wait returns once no query is being answered, or ctx is done. With none
// being answered it still yields the processor, so that a request that
// has just arrived runs now rather than at the scheduler's next
// preemption, up to 10 ms away.
func (l *lanes) wait(ctx context.Context) {
	l.mu.Lock()
	if l.fore == 0 {
		l.mu.Unlock()
		runtime.Gosched()
		return
	}
	clear := l.clear
	l.mu.Unlock()
	select {
	case <-clear:
	case <-ctx.Done():
	}
}

// Foreground marks the caller's work as a query's until done is called:
// background work (see Background) waits meanwhile. A catalog's change
// a user waits for (Retag) runs so.
func (e *Engine) Foreground() (done func()) { return e.lanes.foreground() }

// Background returns a context under which the engine's work gives way
// to its queries: a local model encodes papers only while no search,
// similar, get or embeddings request is being answered. catalog.Import runs so;
// a caller ingesting while the engine serves (seeding) passes it to
// catalog.Ingest.
func (e *Engine) Background(ctx context.Context) context.Context {
	return embed.Yielding(ctx, e.lanes.wait)
}
