package imports

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// renewing is a watch keeper whose renewals answer as answer says; a
// run's lease is all keepLease asks of it.
type renewing struct {
	watchKeeper
	answer func(ctx context.Context) (bool, error)
	calls  atomic.Int64
}

func (r *renewing) renew(ctx context.Context, id, owner string, until time.Time) (bool, error) {
	r.calls.Add(1)
	return r.answer(ctx)
}

// TestLeaseKeptOrRunStopped: a run's lease renewed in time keeps the run
// going; a lease lost to another process stops it at once; and a store
// whose renewals fail, or stall, stops the run before the lease it holds
// runs out, not after. The lease is measured on the watches' clock, which
// each renewal moves on by the time between renewals, so the outcome does
// not depend on how fast the machine schedules the test.
func TestLeaseKeptOrRunStopped(t *testing.T) {
	const lease = 80 * time.Millisecond
	stalled := errors.New("store unreachable")
	for _, tt := range []struct {
		name  string
		renew func(ctx context.Context) (bool, error)
		stops bool
	}{
		{"renewed", func(context.Context) (bool, error) { return true, nil }, false},
		{"lost", func(context.Context) (bool, error) { return false, nil }, true},
		{"failing", func(context.Context) (bool, error) { return false, stalled }, true},
		{"stalling", func(ctx context.Context) (bool, error) { <-ctx.Done(); return false, ctx.Err() }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := &clock{t: time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)}
			store := &renewing{answer: func(ctx context.Context) (bool, error) {
				clk.advance(lease / 4) // a renewal comes a quarter of the lease after the last
				return tt.renew(ctx)
			}}
			w := &Watches{store: store, log: slog.New(slog.DiscardHandler), owner: "me", Now: clk.now, Lease: lease}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			held := clk.now().Add(lease)
			stopped := make(chan time.Time, 1)
			done := make(chan struct{})
			go func() {
				defer close(done)
				w.keepLease(ctx, func() { stopped <- clk.now(); cancel() }, "w1", held)
			}()
			defer func() { cancel(); <-done }()
			if !tt.stops {
				for deadline := time.Now().Add(10 * time.Second); store.calls.Load() < 8; {
					select {
					case <-stopped:
						t.Fatalf("the run was stopped after %d renewals", store.calls.Load())
					case <-time.After(time.Millisecond):
					}
					if time.Now().After(deadline) {
						t.Fatalf("%d renewals in 10 s", store.calls.Load())
					}
				}
				return
			}
			select {
			case at := <-stopped:
				if at.After(held) {
					t.Errorf("the run was stopped %s after its lease ran out", at.Sub(held))
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("the run goes on after %d renewals", store.calls.Load())
			}
		})
	}
}
