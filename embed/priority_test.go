package embed

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestYieldingWaits: an encode under a Yielding context calls its wait
// at every checkpoint, runs no further while wait holds it, gives the
// vectors a plain encode gives once wait lets it go, and stops when its
// context is done.
func TestYieldingWaits(t *testing.T) {
	l := testLocal(t)
	texts := []string{"Graph neural networks for molecules.", "A survey of retrieval-augmented generation."}
	want, err := l.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	var waits atomic.Int64
	wait := func(ctx context.Context) {
		waits.Add(1)
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}
	type result struct {
		v   [][]float32
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := l.Embed(Yielding(context.Background(), waiting(wait)), texts)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("the encode finished while its wait held it: %v", r.err)
	case <-time.After(300 * time.Millisecond): // two short texts take a few ms
	}
	close(gate)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	for i := range want {
		if Dot(r.v[i], want[i]) < 0.99999 {
			t.Errorf("text %d: vector differs from a plain encode's (cos %g)", i, Dot(r.v[i], want[i]))
		}
	}
	// Per text at least one wait per layer and per head.
	if n, min := waits.Load(), int64(len(texts)*l.model.cfg.Layers*(1+l.model.cfg.Heads)); n < min {
		t.Errorf("%d waits, want at least %d", n, min)
	}

	ctx, cancel := context.WithCancel(context.Background())
	held := func(ctx context.Context) { <-ctx.Done() }
	go func() {
		_, err := l.Embed(Yielding(ctx, waiting(held)), texts)
		done <- result{nil, err}
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case r := <-done:
		if !errors.Is(r.err, context.Canceled) {
			t.Errorf("cancelled encode: %v, want context.Canceled", r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled encode still waits")
	}
}

// waitLane is a Lane that calls its func and holds nothing to give back.
type waitLane func(context.Context)

func (w waitLane) Wait(ctx context.Context) { w(ctx) }
func (waitLane) Done()                      {}

// waiting hands out lanes that call wait.
func waiting(wait func(context.Context)) func() Lane {
	return func() Lane { return waitLane(wait) }
}

// countedLane counts its waits and its Done calls.
type countedLane struct{ waits, dones *atomic.Int64 }

func (c countedLane) Wait(context.Context) { c.waits.Add(1) }
func (c countedLane) Done()                { c.dones.Add(1) }

// TestYieldingLanesEnd: each goroutine of a background encode takes a
// lane of its own and says Done once when it ends, so that a lane's
// giver can take back whatever it handed out.
func TestYieldingLanesEnd(t *testing.T) {
	l := testLocal(t)
	var lanes, waits, dones atomic.Int64
	ctx := Yielding(context.Background(), func() Lane {
		lanes.Add(1)
		return countedLane{&waits, &dones}
	})
	texts := []string{"Graph neural networks for molecules.", "A survey of retrieval-augmented generation.", "Sparse attention."}
	if _, err := l.Embed(ctx, texts); err != nil {
		t.Fatal(err)
	}
	if n := lanes.Load(); n < 1 || n > int64(len(texts)) || dones.Load() != n || waits.Load() == 0 {
		t.Errorf("%d lanes, %d Done, %d waits: want each lane Done once, after waits", n, dones.Load(), waits.Load())
	}
}
