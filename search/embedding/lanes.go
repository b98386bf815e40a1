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
type lanes struct {
	mu    sync.Mutex
	fore  int           // queries being answered
	clear chan struct{} // closed when fore falls to 0
	last  time.Time     // when the last query ended
	// slots holds a token for each background goroutine computing while
	// queries are coming; its capacity is one less than the processors
	// (at least one).
	slots chan struct{}
}

func newLanes(procs int) *lanes {
	return &lanes{slots: make(chan struct{}, max(1, procs-1))}
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

// Wait returns once no query is being answered and, while queries are
// coming, once a slot is free (or ctx is done); a slot held since the
// last checkpoint is given back first. With no query for a while it
// still yields the processor, so that a request that has just arrived
// runs now rather than at the scheduler's next preemption.
func (b *lane) Wait(ctx context.Context) {
	l := b.l
	b.release()
	l.mu.Lock()
	if l.fore > 0 {
		clear := l.clear
		l.mu.Unlock()
		select {
		case <-clear:
		case <-ctx.Done():
			return
		}
		l.mu.Lock()
	}
	coming := time.Since(l.last) < foregroundGrace
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
