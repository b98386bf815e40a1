package drive

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for _, tt := range []struct {
		p    float64
		want time.Duration
	}{{50, 50 * time.Millisecond}, {95, 95 * time.Millisecond}, {99, 99 * time.Millisecond}, {100, 100 * time.Millisecond}, {0, time.Millisecond}} {
		if got := Percentile(d, tt.p); got != tt.want {
			t.Errorf("p%v = %v, want %v", tt.p, got, tt.want)
		}
	}
	if Percentile(nil, 50) != 0 {
		t.Error("percentile of nothing")
	}
}

// TestRun counts every call and every failure, whatever the machine's
// speed: the run is ended by the 200th call, not by a clock.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls, failures atomic.Int64
	r := Run(ctx, 4, time.Hour, func(ctx context.Context, _ *http.Client, n int) error {
		if calls.Add(1) == 200 {
			cancel()
		}
		time.Sleep(time.Millisecond)
		if n%10 == 0 {
			failures.Add(1)
			return errors.New("every tenth fails")
		}
		return nil
	})
	// A call failing after the end of the run is not counted: at most one
	// per client.
	if n := int(calls.Load()); r.Requests > n || r.Requests < n-4 {
		t.Errorf("Run counted %d requests of %d calls", r.Requests, n)
	}
	if f := int(failures.Load()); r.Errors > f || r.Errors < f-4 || r.Errors == 0 {
		t.Errorf("Run counted %d errors of %d failures", r.Errors, f)
	}
	if r.P50 < time.Millisecond || r.P99 < r.P50 || r.Max < r.P99 || r.RPS <= 0 {
		t.Errorf("Run = %+v: every call sleeps at least 1 ms", r)
	}
}
