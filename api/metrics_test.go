package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/search"
)

func TestMetrics(t *testing.T) {
	server(t)
	m := NewMetrics()
	eng, err := search.NewEngine(testServer.store, testServer.model, search.Options{Observe: m.Observe})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(eng, catalog.New(eng, catalog.Options{}), Options{Metrics: m}))
	defer srv.Close()
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/v1/search", `{"query":"brain signals","limit":2}`},
		{"POST", "/v1/search", `{"query":""}`},
		{"GET", "/v1/papers/nope", ""},
		{"GET", "/nowhere", ""},
		{"XAAA", "/v1/search", ""}, // any token is a method: counted as other
		{"XBBB", "/v1/search", ""},
	} {
		req, _ := http.NewRequest(r.method, srv.URL+r.path, strings.NewReader(r.body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("%s %s: %d %.200s", r.method, r.path, resp.StatusCode, b)
	}
	// A request is counted after its response is written, so the client can
	// be ahead of the counters for a moment: read until they catch up.
	var body string
	for deadline := time.Now().Add(2 * time.Second); ; {
		resp, err := http.Get(srv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
		if strings.Contains(body, `route="/v1/search",status="200"`) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, want := range []string{
		`papersearch_http_requests_total{method="POST",route="/v1/search",status="200"} 1`,
		`papersearch_http_requests_total{method="POST",route="/v1/search",status="400"} 1`,
		`papersearch_http_requests_total{method="GET",route="/v1/papers/:id",status="404"} 1`,
		`papersearch_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`papersearch_http_requests_total{method="other",route="/v1/search",status="405"} 2`,
		`papersearch_http_request_duration_seconds_bucket{method="POST",route="/v1/search"`,
		`papersearch_operation_duration_seconds_count{op="embed"}`,
		`papersearch_operation_duration_seconds_count{op="nearest"}`,
		`papersearch_operation_duration_seconds_count{op="lexical"}`,
		`papersearch_papers_indexed`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s; it has:\n%s", want, grepLines(body, "papersearch_http_requests_total"))
		}
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestMetricsStartAtZero: before any request, every operation's error
// counter and latency histogram is already exposed, at zero.
func TestMetricsStartAtZero(t *testing.T) {
	srv := httptest.NewServer(New(echoEngine{}, echoEngine{}, Options{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, op := range search.Ops() {
		for _, series := range []string{
			`papersearch_operation_errors_total{op="` + op + `"} 0`,
			`papersearch_operation_duration_seconds_count{op="` + op + `"} 0`,
		} {
			if !strings.Contains(string(b), series) {
				t.Errorf("/metrics lacks %s", series)
			}
		}
	}
}
