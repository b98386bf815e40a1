package search

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/papersearch/papersearch/embed"
)

// Circuit breaker of query embedding.
const (
	// BreakerFailures is how many query embeddings in a row must fail
	// before searches stop waiting for the embedder.
	BreakerFailures = 3
	// DefaultBreakerCooldown is how long query embedding stays off after
	// that before a background probe may turn it on again.
	DefaultBreakerCooldown = 5 * time.Second
)

// errCallerGone marks an embedding cut short by the caller, which says
// nothing about the embedder's health.
var errCallerGone = errors.New("the caller went away")

// queryEmbedder embeds search queries behind a circuit breaker. While the
// embedder answers, every query is embedded within the query deadline.
// After BreakerFailures failures in a row the breaker opens: queries fail
// at once with ErrUnavailable, so a hybrid search answers from its lexical
// side at the cost of a lexical search instead of waiting out the deadline,
// and a probe in the background (one at a time, started by the searches
// that arrive) closes the breaker once the embedder answers again.
type queryEmbedder struct {
	embedder embed.Embedder
	timeout  time.Duration
	breaker  *gobreaker.CircuitBreaker[[]float32]
	probing  atomic.Bool
	log      *slog.Logger
}

func newQueryEmbedder(e embed.Embedder, timeout, cooldown time.Duration, log *slog.Logger) *queryEmbedder {
	q := &queryEmbedder{embedder: e, timeout: timeout, log: log}
	q.breaker = gobreaker.NewCircuitBreaker[[]float32](gobreaker.Settings{
		Name:        "query embedding",
		Timeout:     cooldown,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= BreakerFailures },
		IsExcluded:  func(err error) bool { return errors.Is(err, errCallerGone) },
		OnStateChange: func(name string, from, to gobreaker.State) {
			switch to {
			case gobreaker.StateOpen:
				log.Warn("query embedding keeps failing; searches answer from lexical retrieval alone until a background probe succeeds",
					"after_failures", BreakerFailures, "probe_every", cooldown)
			case gobreaker.StateClosed:
				log.Info("query embedding answers again; dense retrieval is back")
			}
		},
	})
	return q
}

// embed returns text's vector, or an error wrapping ErrUnavailable at once
// while the breaker is open.
func (q *queryEmbedder) embed(ctx context.Context, text string) ([]float32, error) {
	if q.breaker.State() != gobreaker.StateClosed {
		q.probe()
		return nil, fmt.Errorf("embed query: %w: the embedder failed %d times in a row; probing it in the background",
			ErrUnavailable, BreakerFailures)
	}
	v, err := q.breaker.Execute(func() ([]float32, error) { return q.call(ctx, text) })
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return nil, fmt.Errorf("embed query: %w: %w", ErrUnavailable, err)
	}
	return v, err
}

// call embeds one text within the query deadline.
func (q *queryEmbedder) call(ctx context.Context, text string) ([]float32, error) {
	cctx, cancel := context.WithTimeout(ctx, q.timeout)
	defer cancel()
	vecs, err := q.embedder.Embed(cctx, []string{text})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("embed query: %w: %w", errCallerGone, err)
		}
		return nil, fmt.Errorf("embed query: %w", err)
	}
	return vecs[0], nil
}

// probe starts a background probe of the embedder unless one is running.
// Until the breaker's cooldown has passed the probe ends at once; after it,
// the probe is the one embedding the half-open breaker lets through.
func (q *queryEmbedder) probe() {
	if !q.probing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer q.probing.Store(false)
		_, err := q.breaker.Execute(func() ([]float32, error) {
			return q.call(context.Background(), "papersearch query embedding probe")
		})
		if err != nil && !errors.Is(err, gobreaker.ErrOpenState) {
			q.log.Debug("query embedding probe failed", "error", err)
		}
	}()
}
