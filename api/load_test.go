package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search"
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

// TestDrive counts every call and every failure, whatever the machine's
// speed: the run is ended by the 200th call, not by a clock.
func TestDrive(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls, failures atomic.Int64
	r := Drive(ctx, 4, time.Hour, func(ctx context.Context, _ *http.Client, n int) error {
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
		t.Errorf("Drive counted %d requests of %d calls", r.Requests, n)
	}
	if f := int(failures.Load()); r.Errors > f || r.Errors < f-4 || r.Errors == 0 {
		t.Errorf("Drive counted %d errors of %d failures", r.Errors, f)
	}
	if r.P50 < time.Millisecond || r.P99 < r.P50 || r.Max < r.P99 || r.RPS <= 0 {
		t.Errorf("Drive = %+v: every call sleeps at least 1 ms", r)
	}
}

// BenchmarkEncodeSearchResponse encodes a page of ten results with
// abstracts, as every search and similar response does.
func BenchmarkEncodeSearchResponse(b *testing.B) {
	res := search.Results{Index: papersearch.IndexInfo{Store: "embedded", Model: "all-MiniLM-L6-v2", Dim: 384, Papers: 29100}}
	for i := range 10 {
		res.Hits = append(res.Hits, papersearch.Hit{ID: fmt.Sprint("p", i), Rank: i + 1, Score: 0.5,
			Paper: papersearch.Paper{ID: fmt.Sprint("p", i), Title: "A title of a paper", Abstract: strings.Repeat("An abstract sentence. ", 60),
				Authors: []string{"Ada Lovelace", "Alan Turing"}, Venue: "NeurIPS", Year: 2026}})
	}
	for b.Loop() {
		json.NewEncoder(io.Discard).Encode(NewSearchResponse(res))
	}
}
