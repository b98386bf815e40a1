package api

import (
	"context"
	"errors"
	"net/http"
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

func TestDrive(t *testing.T) {
	r := Drive(context.Background(), 4, 300*time.Millisecond, func(ctx context.Context, _ *http.Client, n int) error {
		time.Sleep(time.Millisecond)
		if n%10 == 0 {
			return errors.New("every tenth fails")
		}
		return nil
	})
	if r.Requests < 100 || r.Errors == 0 || r.Errors > r.Requests/5 || r.P50 < time.Millisecond || r.RPS <= 0 {
		t.Errorf("Drive = %+v", r)
	}
}
