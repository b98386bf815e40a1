package embedding

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/storage"
)

// Every call of the embedder is guarded here: observed, its vectors'
// dimensions checked (observedEmbedder), and a query's or a write's
// waited for only while the circuit breaker says the embedder answers.

// Circuit breaker of embedding.
const (
	// BreakerFailures is how many query embeddings in a row must fail
	// before searches stop waiting for the embedder.
	BreakerFailures = 3
	// DefaultBreakerCooldown is how long embedding stays off after that
	// before a background probe may turn it on again.
	DefaultBreakerCooldown = 5 * time.Second
)

// errCallerGone marks an embedding cut short by the caller, which says
// nothing about the embedder's health.
var errCallerGone = errors.New("the caller went away")

// errPastFirst marks the failure of a query's embedding by models past the
// first of a pair, which a search survives (it compares the question by
// the others): the breaker counts only embeddings the first model takes
// part in.
var errPastFirst = errors.New("the models past the first failed")

// breaker is the circuit breaker of embedding: the one
// place that decides whether the embedder is worth waiting for. While the
// embedder answers, a query is embedded within the query deadline and a
// write within its own. The breaker opens after BreakerFailures query
// embeddings fail in a row (not counting a question's embedding by the
// models past a pair's first alone, which a search survives), or at once
// when an embedding that waited its full course fails (a write's, a
// readiness probe's, /v1/embeddings': its client gave up retrying, or its
// deadline passed first). While it is
// open, whatever needs the embedder fails at once with ErrUnavailable: a
// hybrid search answers from its lexical side at the cost of a lexical
// search, a write stores nothing and asks to be retried; and a probe in
// the background (one at a time, started by whatever request arrives:
// searches, writes, readiness probes) closes the breaker once the
// embedder answers again.
type breaker struct {
	queries embed.Embedder // embeds queries, and the probe
	models  int            // how many models queries embeds with (see modelsEmbedder)
	timeout time.Duration
	breaker *gobreaker.CircuitBreaker[[]float32]
	probing atomic.Bool
	last    atomic.Pointer[error] // the last failure counted
	log     *slog.Logger
}

func newBreaker(queries embed.Embedder, models int, timeout, cooldown time.Duration, log *slog.Logger) *breaker {
	b := &breaker{queries: queries, models: models, timeout: timeout, log: log}
	b.breaker = gobreaker.NewCircuitBreaker[[]float32](gobreaker.Settings{
		Name:        "embedding",
		Timeout:     cooldown,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= BreakerFailures },
		IsExcluded:  func(err error) bool { return errors.Is(err, errCallerGone) || errors.Is(err, errPastFirst) },
		OnStateChange: func(name string, from, to gobreaker.State) {
			switch to {
			case gobreaker.StateOpen:
				log.Warn("embedding keeps failing; searches answer from lexical retrieval alone and writes that need embedding are refused until a background probe succeeds",
					"probe_every", cooldown, "error", b.lastFailure())
			case gobreaker.StateClosed:
				log.Info("embedding answers again; dense retrieval and writes are back")
			}
		},
	})
	return b
}

// Query embeds a query with every model within the query deadline,
// behind the circuit breaker, remembering recent ones: an error wrapping
// storage.ErrUnavailable at once while the breaker is open. Remembered
// vectors are shared and must not be modified.
func (m *Models) Query(ctx context.Context, text string) ([]float32, error) {
	return m.QueryModels(ctx, text, 0, len(m.parts)-1)
}

// QueryModels is Query by the models from up to (not including) to of an
// index of several (an embed.Pair): the query's vector with the other
// models' parts zero, so that vectors of ranges that cover every model
// once add up to Query's. An index of one model has one. Only the models
// asked for are run; parts remembered from an earlier call are not run
// again.
func (m *Models) QueryModels(ctx context.Context, text string, from, to int) ([]float32, error) {
	from, to = max(from, 0), min(to, len(m.parts)-1)
	if from >= to { // no model: every part zero
		return make([]float32, m.parts[len(m.parts)-1]), nil
	}
	want := modelBits(from, to)
	cached, _ := m.queries.Get(text)
	if cached.models&want == want {
		return m.only(cached, want), nil
	}
	// Run the models from the first missing one to the last.
	lo, hi := from, to
	for cached.models&modelBits(lo, lo+1) != 0 {
		lo++
	}
	for cached.models&modelBits(hi-1, hi) != 0 {
		hi--
	}
	v, err := m.breaker.query(ctx, text, lo, hi)
	if err != nil {
		return nil, err
	}
	got := queryVector{v: v, models: modelBits(lo, hi)}
	if cached, ok := m.queries.Get(text); ok { // it may have grown meanwhile
		got = m.merge(got, cached)
	}
	m.queries.Add(text, got)
	return m.only(got, want), nil
}

// queryVector is a remembered query vector: the parts of the models whose
// bits are set (bit i, model i), the others zero.
type queryVector struct {
	v      []float32
	models uint64
}

// modelBits are the bits of models from up to to.
func modelBits(from, to int) uint64 {
	if to <= from {
		return 0
	}
	return (1<<(to-from) - 1) << from
}

// only returns q's vector with the parts of the models in bits alone: q's
// own when those are all it holds, else a copy.
func (m *Models) only(q queryVector, bits uint64) []float32 {
	if q.models == bits {
		return q.v
	}
	v := make([]float32, len(q.v))
	for i := range len(m.parts) - 1 {
		if bits&modelBits(i, i+1) != 0 {
			copy(v[m.parts[i]:m.parts[i+1]], q.v[m.parts[i]:m.parts[i+1]])
		}
	}
	return v
}

// merge returns a with b's parts that a lacks added, in a new vector.
func (m *Models) merge(a, b queryVector) queryVector {
	if b.models&^a.models == 0 {
		return a
	}
	out := queryVector{v: slices.Clone(a.v), models: a.models | b.models}
	for i := range len(m.parts) - 1 {
		if bit := modelBits(i, i+1); b.models&bit != 0 && a.models&bit == 0 {
			copy(out.v[m.parts[i]:m.parts[i+1]], b.v[m.parts[i]:m.parts[i+1]])
		}
	}
	return out
}

// query returns text's vector by the models from up to to (all of them
// when those are every model the breaker's embedder has), embedded within
// the query deadline, or an error wrapping ErrUnavailable at once while
// the breaker is open.
func (b *breaker) query(ctx context.Context, text string, from, to int) ([]float32, error) {
	if err := b.refuse(); err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	v, err := b.breaker.Execute(func() ([]float32, error) { return b.call(ctx, text, from, to) })
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return nil, fmt.Errorf("embed query: %w: %w", storage.ErrUnavailable, err)
	}
	return v, err
}

// wait runs embedding, which ctx bounds and which a request waits for (a
// write's, a readiness probe's): refused at once while the breaker is
// open. Its failure opens the breaker when it says the embedder did not
// answer (see unanswered), so that the writes after it fail fast.
func (b *breaker) wait(ctx context.Context, embedding func() error) error {
	if err := b.refuse(); err != nil {
		return err
	}
	err := embedding()
	if err != nil && unanswered(ctx, err) {
		b.trip(err)
	}
	return err
}

// unanswered reports whether err, the failure of an embedding bounded by
// ctx, says that the embedder did not answer: its client's attempts kept
// failing until it gave up retrying or the deadline passed
// (ErrUnavailable). A caller that went away says nothing of the embedder,
// nor does an answer refused (a wrong dimension, a text too long, a
// refused key), nor a deadline alone: an in-process model past a write's
// or a readiness probe's deadline is busy, not down, and searches must not
// lose their dense side for it.
func unanswered(ctx context.Context, err error) bool {
	if errors.Is(ctx.Err(), context.Canceled) {
		return false
	}
	return errors.Is(err, storage.ErrUnavailable)
}

// refuse returns nil while the breaker is closed; else it starts a probe
// and returns an error wrapping ErrUnavailable and the last failure.
func (b *breaker) refuse() error {
	if b.breaker.State() == gobreaker.StateClosed {
		return nil
	}
	b.probe()
	return fmt.Errorf("%w: the embedder keeps failing; probing it in the background (last failure: %w)",
		storage.ErrUnavailable, b.lastFailure())
}

// lastFailure is the last failure the breaker counted.
func (b *breaker) lastFailure() error {
	if p := b.last.Load(); p != nil {
		return *p
	}
	return errors.New("none recorded")
}

// trip opens the breaker at once, err counting as BreakerFailures
// failures in a row, unless it has opened already (or an embedding
// succeeds meanwhile, which says the embedder answers after all).
func (b *breaker) trip(err error) {
	b.last.Store(&err)
	for range BreakerFailures {
		if b.breaker.State() != gobreaker.StateClosed {
			return
		}
		b.breaker.Execute(func() ([]float32, error) { return nil, err })
	}
}

// call embeds one text by the models from up to to within the query
// deadline.
func (b *breaker) call(ctx context.Context, text string, from, to int) ([]float32, error) {
	cctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	var (
		vecs [][]float32
		err  error
	)
	if some, ok := b.queries.(modelsEmbedder); ok && (from > 0 || to < b.models) {
		vecs, err = some.EmbedModels(cctx, []string{text}, from, to)
	} else {
		vecs, err = b.queries.Embed(cctx, []string{text})
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("embed query: %w: %w", errCallerGone, err)
		}
		if from > 0 {
			return nil, fmt.Errorf("embed query: %w: %w", errPastFirst, err)
		}
		err = fmt.Errorf("embed query: %w", err)
		b.last.Store(&err)
		return nil, err
	}
	return vecs[0], nil
}

// probe starts a background probe of the embedder unless one is running.
// Until the breaker's cooldown has passed the probe ends at once; after it,
// the probe is the one embedding the half-open breaker lets through.
func (b *breaker) probe() {
	if !b.probing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer b.probing.Store(false)
		_, err := b.breaker.Execute(func() ([]float32, error) {
			return b.call(context.Background(), "papersearch query embedding probe", 0, b.models)
		})
		if err != nil && !errors.Is(err, gobreaker.ErrOpenState) {
			b.log.Debug("embedding probe failed", "error", err)
		}
	}()
}

// observedEmbedder reports the latency and outcome of every embedding
// call to observe, if not nil.
type observedEmbedder struct {
	embed.Embedder
	observe func(op string, d time.Duration, err error)
}

func (e observedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.observed(func() ([][]float32, error) { return e.Embedder.Embed(ctx, texts) })
}

// modelsEmbedder embeds with some of its models (embed.Pair.EmbedModels).
type modelsEmbedder interface {
	EmbedModels(ctx context.Context, texts []string, from, to int) ([][]float32, error)
}

// EmbedModels passes through to an embedder of several models.
func (e observedEmbedder) EmbedModels(ctx context.Context, texts []string, from, to int) ([][]float32, error) {
	some, ok := e.Embedder.(modelsEmbedder)
	if !ok {
		return nil, fmt.Errorf("embed with some of %s's models: %w", e.Info().Name, errors.ErrUnsupported)
	}
	return e.observed(func() ([][]float32, error) { return some.EmbedModels(ctx, texts, from, to) })
}

// observed runs embedding, telling observe its latency and outcome, and
// checks its vectors' dimensions.
func (e observedEmbedder) observed(embedding func() ([][]float32, error)) ([][]float32, error) {
	start := time.Now()
	v, err := embedding()
	if err == nil {
		err = checkDimensions(e.Info(), v)
	}
	if e.observe != nil {
		e.observe(OpEmbed, time.Since(start), err)
	}
	if errors.Is(err, embed.ErrUnavailable) {
		err = fmt.Errorf("%w: %w", storage.ErrUnavailable, err)
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

// CountTokens passes through to embedders that count tokens exactly.
func (e observedEmbedder) CountTokens(texts []string) int {
	return embed.CountTokens(e.Embedder, texts)
}

// checkDimensions returns an *embed.DimensionError for the first of vecs
// that is not of model's dimension: whichever embedder answered it, it is
// not the model the index was built with, and no store may see it.
func checkDimensions(model embed.ModelInfo, vecs [][]float32) error {
	for _, v := range vecs {
		if len(v) != model.Dim {
			return &embed.DimensionError{Model: model.Name, Got: len(v), Want: model.Dim}
		}
	}
	return nil
}
