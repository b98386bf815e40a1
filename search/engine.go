package search

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/embedding"
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
	store *storage.Observed // measured; the catalog writes through it
	// embedding embeds queries, and the papers the catalog stores.
	embedding *embedding.Models
	// coreDim and models: see coreDim (ModelGate).
	coreDim, models int
	// encoders is the arithmetic and kernel of each local model the
	// embedder runs (none for a remote one).
	encoders map[string]embed.Choice
	log      *slog.Logger
	opts     Options
}

// Options tune an Engine. The zero value is a working default.
type Options struct {
	Logger *slog.Logger
	// Fusion merges dense and lexical results (default DefaultFusion).
	Fusion *Fusion
	// ModelGate says which models of a store of several compare a query
	// with the papers (default DefaultModelGate).
	ModelGate *ModelGate
	// QueryCacheSize is how many recent query vectors are kept (default
	// embedding.DefaultQueryCacheSize).
	QueryCacheSize int
	// EmbedMaxTokens bounds the tokens of one Embed call's distinct texts
	// (default embedding.DefaultMaxTokens; negative: no bound).
	EmbedMaxTokens int
	// CursorKey signs the cursors the engine issues and checks the ones it
	// is given (HMAC-SHA256); engines that share it accept each other's
	// cursors. Default: a random key, so cursors last as long as the engine.
	CursorKey []byte
	// QueryTimeout bounds embedding one query (default
	// embedding.DefaultQueryTimeout).
	QueryTimeout time.Duration
	// RawQueries embeds free-text queries as typed. By default a query gets
	// the embedding model's query instruction first, if it has one
	// (embed.Instructed); papers always get their document instruction.
	RawQueries bool
	// BreakerCooldown is how long searches skip query embedding, and
	// writes that need embedding are refused, once the embedder is found
	// failing (see embedding.BreakerFailures), before a background probe
	// may turn it on again (default embedding.DefaultBreakerCooldown).
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
	// matches of the query's sentences: matchBest (the default) or matchSum.
	AspectMatch string
	// AspectWhole is the weight, from 0 to 1, of the whole-paper cosine
	// similarity in an aspect score, beside the sentences' matches
	// (default 0: the sentences alone).
	AspectWhole float64
	// AspectFusion merges, for an aspect query in hybrid mode, the ranking
	// by sentence matches with the BM25 ranking of the same candidates for
	// the words of the query's sentences (default defaultAspectFusion).
	AspectFusion *Fusion
	// AspectDepth is how many papers an aspect query ranks (default
	// defaultAspectDepth).
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

// Ops lists every operation Options.Observe is told of (the embedder's
// calls and the store's operations), so metrics can show each one from
// the start.
func Ops() []string { return append([]string{embedding.OpEmbed}, storage.Ops()...) }

// NewEngine returns an Engine over store. The embedder must produce the
// vectors the store holds.
func NewEngine(store storage.Store, embedder embed.Embedder, opts Options) (*Engine, error) {
	if err := storage.CheckModel("the index", store.Model(), embedder.Info()); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Fusion == nil {
		opts.Fusion = &DefaultFusion
	}
	if opts.research.AspectFusion == nil {
		opts.research.AspectFusion = &defaultAspectFusion
	}
	if opts.ModelGate == nil {
		opts.ModelGate = &DefaultModelGate
	}
	if len(opts.CursorKey) == 0 {
		opts.CursorKey = newCursorKey()
	}
	models, err := embedding.New(embedder, embedding.Options{Logger: opts.Logger,
		QueryTimeout: opts.QueryTimeout, QueryCacheSize: opts.QueryCacheSize, RawQueries: opts.RawQueries,
		BreakerCooldown: opts.BreakerCooldown, MaxTokens: opts.EmbedMaxTokens,
		SeparateSentences: opts.research.SeparateSentences, Observe: opts.Observe})
	if err != nil {
		return nil, err
	}
	dim, n := coreDim(models.List(), *opts.ModelGate)
	if p, ok := store.(storage.PrefixScanner); ok && dim > 0 {
		p.ScanPrefix(dim)
	}
	return &Engine{store: storage.Observe(store, opts.Observe),
		embedding: models, coreDim: dim, models: n, encoders: embed.Choices(embedder),
		log: opts.Logger, opts: opts}, nil
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

// Models lists the models Embed answers for (see embedding.Models.List).
func (e *Engine) Models() []embed.ModelInfo { return e.embedding.List() }

// Embed embeds texts as given with the named model, as a query's work
// (see embedding.Models.Embed): what /v1/embeddings answers.
func (e *Engine) Embed(ctx context.Context, model string, texts []string) ([][]float32, int, error) {
	defer e.embedding.Foreground()()
	return e.embedding.Embed(ctx, model, texts)
}

// Embedding is how the engine embeds: the catalog embeds the papers it
// stores with it, as the engine compares them with queries.
func (e *Engine) Embedding() *embedding.Models { return e.embedding }

// Collections lists every tag the stored papers hold with how many hold
// it and how many are marked not interested for it, by name; past
// MaxTags, the most held. The marks themselves (not.<tag>) are not
// collections.
func (e *Engine) Collections(ctx context.Context) ([]papersearch.Collection, error) {
	defer e.embedding.Foreground()()
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
func (e *Engine) Changes() *storage.Changes { return e.store.Changes() }
