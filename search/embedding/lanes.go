package embedding

import (
	"context"
	"runtime"
	"sync"

	"github.com/papersearch/papersearch/embed"
)

// lanes let queries go first at the encoder: background work (imports,
// seeding; see Models.Background) waits at the encoder's checkpoints
// while any query is being answered, so that a long import costs a search
// little of its latency on a local model.
type lanes struct {
	mu    sync.Mutex
	fore  int           // queries being answered
	clear chan struct{} // closed when fore falls to 0
}

// Foreground marks the caller's work as a query's until done is called:
// background work (see Background) waits meanwhile. The engine's reads
// run so, and a catalog's change a user waits for (a retag).
func (m *Models) Foreground() (done func()) {
	l := &m.lanes
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

// Background returns a context under which embedding gives way to
// queries: a local model encodes papers only while no search, similar,
// get or embeddings request is being answered. The catalog's imports run
// so; a caller ingesting while the engine serves (seeding) passes it to
// catalog.Ingest.
func (m *Models) Background(ctx context.Context) context.Context {
	return embed.Yielding(ctx, m.lanes.wait)
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
