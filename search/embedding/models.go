package embedding

import (
	"log/slog"
	"runtime"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/roles"
)

// Models embeds with the index's model: queries, documents and texts as
// given, behind one circuit breaker.
type Models struct {
	// whole embeds texts as given (the OpenAI-compatible endpoint); docs
	// embeds papers and their sentences as documents, with the model's
	// document instructions (embed.Instructed).
	whole, docs embed.Embedder
	// inContext embeds papers in parts (their sentences pooled from the
	// paper's encoder pass) when the model can and Options allow; else nil.
	inContext embed.PartEmbedder
	// byModel are the embedders Embed answers for, as given (observed): the
	// index's first, then, for a pair, each of its models.
	byModel   []embed.Embedder
	queries   *lru.Cache[string, queryVector] // recent query vectors by text
	parts     []int                           // where each model's part of a vector starts, then the end
	breaker   *breaker
	roles     *roles.Classifier // labels abstracts' sentences
	maxTokens int
	observe   func(op string, d time.Duration, err error)
	lanes     *lanes // queries go first (see Foreground)
}

// Options tune Models. The zero value is a working default.
type Options struct {
	Logger *slog.Logger
	// QueryTimeout bounds embedding one query (default DefaultQueryTimeout).
	QueryTimeout time.Duration
	// QueryCacheSize is how many recent query vectors are kept (default
	// DefaultQueryCacheSize).
	QueryCacheSize int
	// RawQueries embeds queries as typed. By default a query gets the
	// model's query instruction first, if it has one (embed.Instructed);
	// papers always get their document instruction.
	RawQueries bool
	// BreakerCooldown is how long queries skip embedding, and writes that
	// need it are refused, once the embedder is found failing (see
	// BreakerFailures), before a background probe may turn it on again
	// (default DefaultBreakerCooldown).
	BreakerCooldown time.Duration
	// MaxTokens bounds the tokens of one Embed call's distinct texts
	// (default DefaultMaxTokens; negative: no bound).
	MaxTokens int
	// SeparateSentences embeds each abstract sentence as a text of its own
	// even when the model can pool sentence vectors from the paper's single
	// encoder pass (embed.PartEmbedder), which it does by default: a way of
	// embedding kept for the dev signals that compare it (docs/ranking.md).
	SeparateSentences bool
	// Observe, if set, is told the duration and outcome of every call of
	// the embedder, as operation OpEmbed, for metrics.
	Observe func(op string, d time.Duration, err error)
}

// OpEmbed names a call of the embedder to Options.Observe.
const OpEmbed = "embed"

// Defaults of Options.
const (
	DefaultQueryCacheSize = 1024
	DefaultQueryTimeout   = 5 * time.Second
)

// composite is an embedder made of models each answering on its own (an
// embed.Pair): Models also embeds with each of them by name.
type composite interface {
	Parts() []embed.Embedder
}

// New returns Models embedding with embedder, the model the index was
// built with.
func New(embedder embed.Embedder, opts Options) (*Models, error) {
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
	if opts.MaxTokens == 0 {
		opts.MaxTokens = DefaultMaxTokens
	}
	cache, err := lru.New[string, queryVector](opts.QueryCacheSize)
	if err != nil {
		return nil, err
	}
	labeller, err := roles.New()
	if err != nil {
		return nil, err
	}
	observed := func(e embed.Embedder) embed.Embedder { return observedEmbedder{Embedder: e, observe: opts.Observe} }
	byModel := []embed.Embedder{observed(embedder)}
	if p, ok := embedder.(composite); ok {
		for _, m := range p.Parts() {
			byModel = append(byModel, observed(m))
		}
	}
	parts := []int{0}
	for _, e := range byModel[min(1, len(byModel)-1):] {
		parts = append(parts, parts[len(parts)-1]+e.Info().Dim)
	}
	queries := embedder
	if !opts.RawQueries {
		queries = embed.Instructed(embedder, embed.Query)
	}
	docs := embed.Instructed(embedder, embed.Document)
	inContext, ok := embed.AsPartEmbedder(docs)
	if !ok || opts.SeparateSentences {
		inContext = nil
	}
	return &Models{whole: byModel[0], docs: observed(docs), inContext: inContext, byModel: byModel,
		queries: cache, parts: parts, roles: labeller, maxTokens: opts.MaxTokens, observe: opts.Observe,
		breaker: newBreaker(observed(queries), len(parts)-1, opts.QueryTimeout, opts.BreakerCooldown, opts.Logger),
		lanes:   newLanes(runtime.GOMAXPROCS(0))}, nil
}

// List lists the models Embed answers for: the index's, and for a pair
// each of its two, so another papersearch can build the same pair from
// this one's /v1/embeddings.
func (m *Models) List() []embed.ModelInfo {
	out := make([]embed.ModelInfo, len(m.byModel))
	for i, e := range m.byModel {
		out[i] = e.Info()
	}
	return out
}
