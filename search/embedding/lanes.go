package embedding

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/papersearch/papersearch/embed"
)

// foregroundGrace is how long after a query background work keeps
// leaving a processor free (see lanes).
const foregroundGrace = 2 * time.Second

// Background work blocked behind queries for backgroundStarved of a
// window of backgroundStarved+backgroundTurn goes on beside them for
// backgroundTurn (on the processors but one; see lanes), so that an
// import under a steady stream of queries still moves.
const (
	backgroundStarved = 100 * time.Millisecond
	backgroundTurn    = 50 * time.Millisecond
)

// lanes let queries go first at the encoder: background work (imports,
// seeding; see Models.Background) waits at the encoder's checkpoints
// while any query is being answered, so that a long import costs a search
// little of its latency on a local model. And while queries are coming
// (until foregroundGrace after the last), at most one fewer background
// goroutine computes at once than there are processors: with every
// processor kept busy by runnable background goroutines, Go's scheduler
// looks for network input only every 10 ms or so (sysmon), so a request
// arriving during an import would wait for that before it could even say
// it is a query. Measured over 29,100 papers, one client, an Intel Xeon
// of 2 cores: a search during an import 21.9 ms p50 with every processor
// given to the import, 9 ms alone.
//
// Waiting is bounded: when queries follow one another with gaps too
// short to matter (one client's back-to-back searches on a slow CPU are
// enough), background work that has been blocked for backgroundStarved of
// a window of backgroundStarved+backgroundTurn takes a turn of
// backgroundTurn beside them, holding a slot: a third of a processor at
// least. Queries that leave the encoder idle most of the time never give
// it a turn. Without the bound an import beside one client's searches on
// an AMD EPYC Zen 3 of 2 cores encoded a text in 2.4–6.6 s (its
// checkpoints passed only in the gaps between searches) and stored nothing
// in 10 s.
type lanes struct {
	mu    sync.Mutex
	fore  int           // queries being answered
	clear chan struct{} // closed when fore falls to 0
	last  time.Time     // when the last query ended
	// The window of background work's waiting: when it began, how long
	// background work was blocked in it before blockedFrom, and how many
	// lanes are blocked since blockedFrom; turn is when a turn ends.
	window, blockedFrom, turn time.Time
	blocked                   time.Duration
	blockedLanes              int
	// slots holds a token for each background goroutine computing while
	// queries are coming; its capacity is one less than the processors
	// (at least one).
	slots chan struct{}
}

func newLanes(procs int) *lanes {
	return &lanes{slots: make(chan struct{}, max(1, procs-1))}
}

// blockedFor returns how long background work has been blocked behind
// queries in the current window, which it first begins anew if it has
// ended. The caller holds l.mu.
func (l *lanes) blockedFor(now time.Time) time.Duration {
	if now.Sub(l.window) >= backgroundStarved+backgroundTurn {
		l.window, l.blocked = now, 0
	}
	return l.blocked + l.blockedSince(now)
}

// blockedSince returns how long, by now, lanes have been blocked since
// blockedFrom or the window's beginning, whichever is later. The caller
// holds l.mu.
func (l *lanes) blockedSince(now time.Time) time.Duration {
	if l.blockedLanes == 0 {
		return 0
	}
	return max(0, min(now.Sub(l.blockedFrom), now.Sub(l.window)))
}

// block and unblock count a lane in or out of those blocked behind
// queries. The caller holds l.mu.
func (l *lanes) block(now time.Time) {
	if l.blockedLanes == 0 {
		l.blockedFrom = now
	}
	l.blockedLanes++
}

func (l *lanes) unblock(now time.Time) {
	if l.blockedLanes == 1 {
		l.blocked += l.blockedSince(now)
	}
	l.blockedLanes--
}

// Foreground marks the caller's work as a query's until done is called:
// background work (see Background) waits meanwhile. The engine's reads
// run so, and a catalog's change a user waits for (a retag).
func (m *Models) Foreground() (done func()) {
	l := m.lanes
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
			l.last = time.Now()
			close(l.clear)
		}
	}
}

// Background returns a context under which embedding gives way to
// queries: a local model encodes papers only while no search, similar,
// get or embeddings request is being answered, and leaves a processor
// free while they are coming. The catalog's imports run so; a caller
// ingesting while the engine serves (seeding) passes it to
// catalog.Ingest.
func (m *Models) Background(ctx context.Context) context.Context {
	return embed.Yielding(ctx, func() embed.Lane { return &lane{l: m.lanes} })
}

// lane is one background goroutine's: whether it holds a slot.
type lane struct {
	l    *lanes
	held bool
}

// Wait returns once no query is being answered, or background work has
// waited its turn (see lanes), and, while queries are coming, once a slot
// is free (or ctx is done); a slot held since the last checkpoint is given
// back first. With no query for a while it still yields the processor,
// so that a request that has just arrived runs now rather than at the
// scheduler's next preemption.
func (b *lane) Wait(ctx context.Context) {
	l := b.l
	b.release()
	l.mu.Lock()
	for l.fore > 0 {
		now := time.Now()
		if now.Before(l.turn) {
			break
		}
		blocked := l.blockedFor(now)
		if blocked >= backgroundStarved {
			l.turn = now.Add(backgroundTurn)
			l.window, l.blocked = l.turn, 0 // the next window begins as the turn ends
			break
		}
		clear, wake := l.clear, time.NewTimer(backgroundStarved-blocked)
		l.block(now)
		l.mu.Unlock()
		var done bool
		select {
		case <-clear:
		case <-wake.C:
		case <-ctx.Done():
			done = true
		}
		wake.Stop()
		l.mu.Lock()
		l.unblock(time.Now())
		if done {
			l.mu.Unlock()
			return
		}
	}
	coming := time.Since(l.last) < foregroundGrace || l.fore > 0
	l.mu.Unlock()
	if !coming {
		runtime.Gosched()
		return
	}
	select {
	case l.slots <- struct{}{}:
		b.held = true
	case <-ctx.Done():
	}
}

// Done gives back the lane's slot, if it holds one.
func (b *lane) Done() { b.release() }

func (b *lane) release() {
	if b.held {
		<-b.l.slots
		b.held = false
	}
}
