// Package drive generates HTTP load from concurrent clients and measures
// it: latency percentiles, throughput and failures.
package drive

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Result summarises a load run: latency percentiles of the requests
// that succeeded, throughput, and how many failed.
type Result struct {
	Requests int           `json:"requests"`
	Errors   int           `json:"errors"`
	P50      time.Duration `json:"-"`
	P95      time.Duration `json:"-"`
	P99      time.Duration `json:"-"`
	Max      time.Duration `json:"-"`
	RPS      float64       `json:"rps"`
}

// Run runs do from clients goroutines, each with its own keep-alive HTTP
// client, until d has passed or ctx is done, and measures every call. do
// gets the client and a per-goroutine sequence number; an error counts as
// a failed request.
func Run(ctx context.Context, clients int, d time.Duration, do func(ctx context.Context, c *http.Client, n int) error) Result {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		mu        sync.Mutex
		latencies []time.Duration
		errs      int
		wg        sync.WaitGroup
	)
	start := time.Now()
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 30 * time.Second}
			defer c.CloseIdleConnections()
			var local []time.Duration
			localErrs := 0
			for n := w; ctx.Err() == nil; n += clients {
				t := time.Now()
				err := do(ctx, c, n)
				if ctx.Err() != nil && err != nil {
					break // cut off by the end of the run, not a failure
				}
				if err != nil {
					localErrs++
					continue
				}
				local = append(local, time.Since(t))
			}
			mu.Lock()
			latencies = append(latencies, local...)
			errs += localErrs
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(latencies)
	r := Result{Requests: len(latencies) + errs, Errors: errs, RPS: float64(len(latencies)) / elapsed.Seconds()}
	if len(latencies) > 0 {
		r.P50, r.P95, r.P99 = Percentile(latencies, 50), Percentile(latencies, 95), Percentile(latencies, 99)
		r.Max = latencies[len(latencies)-1]
	}
	return r
}

// Percentile returns the p-th percentile (nearest rank) of sorted durations.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// Fetch sends req with c, reads the whole response and returns an error
// unless it answered 200 OK.
func Fetch(c *http.Client, req *http.Request) error {
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}
