package embed

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// crew runs the parts of one text's split layers on goroutines that stay
// awake between layers. A text's encoder splits dozens of times (each
// layer's products and attention) a few hundred microseconds apart; a
// goroutine started per split lands on an idle core whose thread the
// runtime has parked, and waking it (in a virtual machine, waking its
// vCPU) costs about as much as the part it runs, so a lone query gained
// nothing from a second core. A crew's goroutines poll for work, yielding
// to any other goroutine, and park only after spinIdle without any.
type crew struct {
	n    int            // parts: the caller and n-1 goroutines
	fn   func(part int) // the work of the current generation
	gen  atomic.Uint64  // generations posted
	left atomic.Int64   // goroutines still running the current one
	stop atomic.Bool

	mu       sync.Mutex
	wake     sync.Cond
	sleeping int
	wg       sync.WaitGroup
}

// spinIdle is how long a crew's goroutine polls for work before parking:
// longer than a layer's serial steps (LayerNorm, quantisation), far
// shorter than the gap between two requests.
const spinIdle = 2 * time.Millisecond

// newCrew starts n-1 goroutines; with the caller they run n parts.
func newCrew(n int) *crew {
	c := &crew{n: n}
	c.wake.L = &c.mu
	for i := 1; i < n; i++ {
		c.wg.Add(1)
		go c.loop(i)
	}
	return c
}

// loop runs part i of each generation posted until the crew stops.
func (c *crew) loop(i int) {
	defer c.wg.Done()
	var seen uint64
	idleSince := time.Now()
	for polls := 0; ; polls++ {
		if c.stop.Load() {
			return
		}
		if g := c.gen.Load(); g != seen {
			seen = g
			c.fn(i)
			c.left.Add(-1)
			idleSince = time.Now()
			continue
		}
		if polls%64 == 63 && time.Since(idleSince) > spinIdle {
			c.mu.Lock()
			c.sleeping++
			for c.gen.Load() == seen && !c.stop.Load() {
				c.wake.Wait()
			}
			c.sleeping--
			c.mu.Unlock()
			idleSince = time.Now()
			continue
		}
		if polls%64 == 63 {
			runtime.Gosched()
		}
	}
}

// run calls fn(i) for each part i of parts (at most c.n) at once, part 0
// on the calling goroutine, and returns when all are done.
func (c *crew) run(parts int, fn func(part int)) {
	c.fn = func(i int) {
		if i < parts {
			fn(i)
		}
	}
	c.left.Store(int64(c.n - 1))
	c.gen.Add(1)
	c.mu.Lock()
	if c.sleeping > 0 {
		c.wake.Broadcast()
	}
	c.mu.Unlock()
	fn(0)
	for polls := 0; c.left.Load() > 0; polls++ {
		if polls%64 == 63 {
			runtime.Gosched()
		}
	}
}

// close stops the crew's goroutines and waits for them.
func (c *crew) close() {
	c.stop.Store(true)
	c.mu.Lock()
	c.wake.Broadcast()
	c.mu.Unlock()
	c.wg.Wait()
}
