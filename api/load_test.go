package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
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

// BenchmarkEncodeSearchResponse encodes a page of ten results with
// abstracts, as every search and similar response does.
func BenchmarkEncodeSearchResponse(b *testing.B) {
	res := search.Results{Index: search.IndexInfo{Store: "embedded", Model: "all-MiniLM-L6-v2", Dim: 384, Papers: 29100}}
	for i := range 10 {
		res.Hits = append(res.Hits, search.Hit{ID: fmt.Sprint("p", i), Rank: i + 1, Score: 0.5,
			Paper: papersearch.Paper{ID: fmt.Sprint("p", i), Title: "A title of a paper", Abstract: strings.Repeat("An abstract sentence. ", 60),
				Authors: []string{"Ada Lovelace", "Alan Turing"}, Venue: "NeurIPS", Year: 2026}})
	}
	for b.Loop() {
		json.NewEncoder(io.Discard).Encode(NewSearchResponse(res))
	}
}
