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
		v, err := l.Embed(Yielding(context.Background(), wait), texts)
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
		_, err := l.Embed(Yielding(ctx, held), texts)
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
