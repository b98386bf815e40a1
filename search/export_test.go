package search

import (
	"context"
	"time"
)

// ResearchOptions are the engine's research knobs (see research), which
// only tests set: the dev signals that compare them with the defaults.
type ResearchOptions research

// WithResearch returns opts with the research knobs r.
func WithResearch(opts Options, r ResearchOptions) Options {
	opts.research = research(r)
	return opts
}

// MaxSeen is how deep cursors page.
const MaxSeen = maxSeen

// SearchAtOnce answers the first n results of q (n up to MaxSeen, beyond
// the MaxLimit one request may ask) as one page, cut from the same
// ranking that q's pages are cut from: what paging put together must equal.
func (e *Engine) SearchAtOnce(ctx context.Context, q Query, n int) (Results, error) {
	if err := q.validate(); err != nil {
		return Results{}, err
	}
	q.Limit = n
	return e.searchWhole(ctx, time.Now(), q)
}

// MatchSum is the research knob AspectMatch's value that sums the best
// matches of the query's sentences (see research).
const MatchSum = matchSum
