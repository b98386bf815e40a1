package imports

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// renewing is a watch keeper whose renewals answer as renew says; a run's
// lease is all keepLease asks of it.
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
// runs out, not after.
func TestLeaseKeptOrRunStopped(t *testing.T) {
	const lease = 400 * time.Millisecond
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
			store := &renewing{answer: tt.renew}
			w := &Watches{store: store, log: slog.New(slog.DiscardHandler), owner: "me", Now: time.Now, Lease: lease}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			held := time.Now().Add(lease)
			stopped := make(chan time.Time, 1)
			done := make(chan struct{})
			go func() {
				defer close(done)
				w.keepLease(ctx, func() { stopped <- time.Now(); cancel() }, "w1", held)
			}()
			select {
			case at := <-stopped:
				if !tt.stops {
					t.Fatalf("the run was stopped after %d renewals", store.calls.Load())
				}
				if at.After(held) {
					t.Errorf("the run was stopped %s after its lease ran out", at.Sub(held))
				}
			case <-time.After(4 * lease):
				if tt.stops {
					t.Fatal("the run goes on")
				}
				if store.calls.Load() < 3 {
					t.Errorf("%d renewals in 4 leases", store.calls.Load())
				}
				cancel()
			}
			<-done
		})
	}
}
