package embed_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/papersearch/papersearch/api"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/sqlite"
)

// upstream is the project's own server: the local model behind a real
// /v1/embeddings on 127.0.0.1, shared by the tests of this file.
var upstream struct {
	once  sync.Once
	url   string
	local embed.Embedder
	err   error
}

func TestMain(m *testing.M) {
	if _, child := testenv.Child(); child { // a memory test's child: it needs no upstream
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "papersearch-openai-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var closeAll func()
	upstream.once.Do(func() {
		local, err := embed.NewLocal(embed.LocalOptions{})
		if err != nil {
			upstream.err = err
			return
		}
		store, err := sqlite.Open(context.Background(), filepath.Join(dir, "papers.db"), local.Info())
		if err != nil {
			upstream.err = err
			return
		}
		eng, err := search.NewEngine(store, local, search.Options{})
		if err != nil {
			upstream.err = err
			return
		}
		srv := httptest.NewServer(api.New(eng, catalog.New(eng, catalog.Options{}), api.Options{}))
		upstream.url, upstream.local = srv.URL, local
		closeAll = func() { srv.Close(); store.Close() }
	})
	code := m.Run()
	if closeAll != nil {
		closeAll()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// fault decides what the proxy does with the n-th request (from 1): return
// true after writing a response itself, false to forward it.
type fault func(n int, w http.ResponseWriter, req map[string]any) bool

// proxy forwards to the upstream server, injecting faults and optionally
// rewriting successful responses.
type proxy struct {
	*httptest.Server
	requests atomic.Int64
}

func newProxy(t *testing.T, f fault, rewrite func(n int, body map[string]any)) *proxy {
	t.Helper()
	if upstream.err != nil {
		t.Fatal(upstream.err)
	}
	p := &proxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(p.requests.Add(1))
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		json.Unmarshal(body, &req)
		if f != nil && f(n, w, req) {
			return
		}
		resp, err := http.Post(upstream.url+r.URL.Path, "application/json", bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if rewrite != nil && resp.StatusCode == 200 {
			var m map[string]any
			json.Unmarshal(out, &m)
			rewrite(n, m)
			out, _ = json.Marshal(m)
		}
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		w.Write(out)
	}))
	t.Cleanup(p.Close)
	return p
}

func client(t *testing.T, url string, tweak func(*embed.OpenAIConfig)) *embed.OpenAI {
	t.Helper()
	cfg := embed.OpenAIConfig{BaseURL: url + "/v1", Model: embed.DefaultLocalModel, Dimensions: 1152,
		BatchSize: 4, Concurrency: 2, MaxRetryTime: 20 * time.Second}
	if tweak != nil {
		tweak(&cfg)
	}
	c, err := embed.NewOpenAI(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var texts = []string{
	"graph neural networks for molecules",
	"speech recognition with transformers",
	"protein structure prediction from sequence",
	"reinforcement learning from human feedback",
	"diffusion models for image synthesis",
	"federated learning with heterogeneous clients",
	"contact modelling for hand-object interaction",
	"bayesian optimisation of hyperparameters",
	"sparse attention for long documents",
	"causal inference from observational data",
}

// assertLocal checks the client's vectors equal the local model's.
func assertLocal(t *testing.T, got [][]float32, texts []string) {
	t.Helper()
	want, err := upstream.local.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d vectors for %d texts", len(got), len(want))
	}
	for i := range want {
		if c := embed.Dot(got[i], want[i]); c < 0.9999 {
			t.Errorf("text %d: cosine to the local model %.6f, want >= 0.9999", i, c)
		}
	}
}

func TestOpenAIMatchesLocal(t *testing.T) {
	p := newProxy(t, nil, nil)
	// Dimension learnt from a probe when not configured.
	c := client(t, p.URL, func(c *embed.OpenAIConfig) { c.Dimensions = 0 })
	if got := c.Info(); got != (embed.ModelInfo{Name: embed.DefaultLocalModel, Dim: 1152}) {
		t.Errorf("Info = %+v", got)
	}
	got, err := c.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	assertLocal(t, got, texts)
	// 1 probe + 10 texts in batches of 4 = 3 requests.
	if n := p.requests.Load(); n != 4 {
		t.Errorf("%d requests, want 4 (probe + 3 batches of at most 4)", n)
	}
}

func TestOpenAIRetriesToSuccess(t *testing.T) {
	httpDate := func() string { return time.Now().Add(time.Second).UTC().Format(http.TimeFormat) }
	tests := []struct {
		name    string
		fault   fault
		rewrite func(int, map[string]any)
		minWait time.Duration
	}{
		{"429 with Retry-After seconds", func(n int, w http.ResponseWriter, _ map[string]any) bool {
			if n == 1 {
				w.Header().Set("Retry-After", "1")
				http.Error(w, `{"error":{"message":"Rate limit reached","type":"requests"}}`, http.StatusTooManyRequests)
				return true
			}
			return false
		}, nil, 900 * time.Millisecond},
		{"429 with Retry-After date", func(n int, w http.ResponseWriter, _ map[string]any) bool {
			if n == 1 {
				w.Header().Set("Retry-After", httpDate())
				w.WriteHeader(http.StatusTooManyRequests)
				return true
			}
			return false
		}, nil, 0},
		{"500 twice", func(n int, w http.ResponseWriter, _ map[string]any) bool {
			if n <= 2 {
				http.Error(w, "upstream exploded", http.StatusInternalServerError)
				return true
			}
			return false
		}, nil, 0},
		{"503 with JSON error", func(n int, w http.ResponseWriter, _ map[string]any) bool {
			if n == 1 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusServiceUnavailable)
				io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
				return true
			}
			return false
		}, nil, 0},
		{"dropped connection", func(n int, w http.ResponseWriter, _ map[string]any) bool {
			if n == 1 {
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close()
				}
				return true
			}
			return false
		}, nil, 0},
		{"truncated JSON", func(n int, w http.ResponseWriter, _ map[string]any) bool {
			if n == 1 {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,`)
				return true
			}
			return false
		}, nil, 0},
		{"wrong count once", nil, func(n int, m map[string]any) {
			if n == 1 {
				data := m["data"].([]any)
				m["data"] = data[:len(data)-1]
			}
		}, 0},
		{"reordered", nil, func(_ int, m map[string]any) {
			data := m["data"].([]any)
			for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
				data[i], data[j] = data[j], data[i]
			}
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProxy(t, tt.fault, tt.rewrite)
			c := client(t, p.URL, func(c *embed.OpenAIConfig) { c.BatchSize = 16; c.RequestTimeout = 10 * time.Second })
			start := time.Now()
			got, err := c.Embed(context.Background(), texts)
			if err != nil {
				t.Fatalf("not retried to success: %v", err)
			}
			assertLocal(t, got, texts)
			if d := time.Since(start); d < tt.minWait {
				t.Errorf("took %v; Retry-After asked for at least %v", d, tt.minWait)
			}
			if tt.rewrite == nil || strings.Contains(tt.name, "once") {
				if n := p.requests.Load(); n < 2 {
					t.Errorf("%d requests: the fault was not retried", n)
				}
			}
		})
	}
}

func TestOpenAIFailsClearly(t *testing.T) {
	tests := []struct {
		name     string
		fault    fault
		rewrite  func(int, map[string]any)
		want     []string // substrings of the error
		requests int64    // exact requests made, 0 to skip
		model    string
		is       error // a sentinel the error wraps, or nil
	}{
		{"bad key", func(_ int, w http.ResponseWriter, _ map[string]any) bool {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
			return true
		}, nil, []string{"401", "Incorrect API key", "refused the API key"}, 1, "", embed.ErrAPIKey},
		{"unknown model", nil, nil, []string{"404", "does not exist", "text-embedding-9", "wrong URL"}, 1, "text-embedding-9", embed.ErrModelNotServed},
		{"wrong dimension", nil, func(_ int, m map[string]any) {
			d := m["data"].([]any)[0].(map[string]any)
			d["embedding"] = d["embedding"].([]any)[:100]
		}, []string{"model " + embed.DefaultLocalModel + " answered 100-dimensional vectors", "holds 1152-dimensional"}, 1, "", embed.ErrDimensions},
		{"a vector of zeros", nil, func(_ int, m map[string]any) {
			d := m["data"].([]any)[1].(map[string]any)
			d["embedding"] = make([]any, len(d["embedding"].([]any)))
			for i := range d["embedding"].([]any) {
				d["embedding"].([]any)[i] = 0.0
			}
		}, []string{"embedding 1 is all zeros"}, 0, "", embed.ErrBadResponse},
		{"always 503", func(_ int, w http.ResponseWriter, _ map[string]any) bool {
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
			return true
		}, nil, []string{"503", "maintenance", "attempts"}, 0, "", nil},
		{"Retry-After beyond the retry budget", func(_ int, w http.ResponseWriter, _ map[string]any) bool {
			w.Header().Set("Retry-After", "3600")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return true
		}, nil, []string{"429", "slow down"}, 1, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProxy(t, tt.fault, tt.rewrite)
			c := client(t, p.URL, func(c *embed.OpenAIConfig) {
				c.MaxRetryTime = 3 * time.Second
				c.BatchSize = 16
				if tt.model != "" {
					c.Model = tt.model
				}
			})
			// The context only guards against a client that never gives up:
			// it must stop on its own budget, so its error is not the context's.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := c.Embed(ctx, texts[:3])
			if err == nil {
				t.Fatal("no error")
			}
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("the client did not give up within its 3s retry budget: %v", err)
			}
			if !errors.Is(err, embed.ErrEndpoint) && !errors.Is(err, embed.ErrBadResponse) {
				t.Errorf("error %v wraps neither ErrEndpoint nor ErrBadResponse", err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v does not wrap %v", err, tt.is)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if tt.requests > 0 && p.requests.Load() != tt.requests {
				t.Errorf("%d requests, want %d (should fail at once)", p.requests.Load(), tt.requests)
			}
		})
	}
}

// TestOpenAITooLong: an endpoint that rejects long inputs gets the batch
// split and the long text embedded in windows, not a failed batch.
func TestOpenAITooLong(t *testing.T) {
	const maxChars = 200
	long := strings.Repeat("Transformers model long documents with sparse attention patterns. ", 12)
	p := newProxy(t, func(_ int, w http.ResponseWriter, req map[string]any) bool {
		for _, in := range req["input"].([]any) {
			if len(in.(string)) > maxChars {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `{"error":{"message":"This model's maximum context length is 50 tokens","type":"invalid_request_error"}}`)
				return true
			}
		}
		return false
	}, nil)
	c := client(t, p.URL, func(c *embed.OpenAIConfig) { c.BatchSize = 16 })
	in := []string{texts[0], long, texts[1]}
	got, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	assertLocal(t, [][]float32{got[0], got[2]}, []string{texts[0], texts[1]})
	whole, _ := upstream.local.Embed(context.Background(), []string{long})
	if c := embed.Dot(got[1], whole[0]); c < 0.9 {
		t.Errorf("windowed vector's cosine to the whole text %.3f, want >= 0.9", c)
	}
}

func TestParseRetryAfterAndBatching(t *testing.T) {
	// Batches respect the token budget as well as the count.
	p := newProxy(t, nil, nil)
	c := client(t, p.URL, func(c *embed.OpenAIConfig) { c.BatchSize = 100; c.BatchTokens = 30 })
	if _, err := c.Embed(context.Background(), texts); err != nil {
		t.Fatal(err)
	}
	// Each text is ~9-12 estimated tokens, so at most 3 per request: at least 4 requests.
	if n := p.requests.Load(); n < 4 {
		t.Errorf("%d requests for a 30-token budget, want >= 4", n)
	}
	if _, err := c.Embed(context.Background(), nil); !errors.Is(err, embed.ErrEmptyInput) {
		t.Errorf("empty input: %v", err)
	}
}

func TestOpenAIUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	_, err := embed.NewOpenAI(context.Background(), embed.OpenAIConfig{BaseURL: url + "/v1", Model: "m", MaxRetryTime: time.Second})
	if err == nil || !errors.Is(err, embed.ErrEndpoint) || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("unreachable endpoint: %v", err)
	}
}

// silentEndpoint is the URL of an endpoint on 127.0.0.1 that takes every
// request and never answers, until the request goes away or the test ends.
func silentEndpoint(t *testing.T) string {
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) }) // runs first: Close waits for the handlers
	return srv.URL
}

// TestOpenAISilentEndpoint: an endpoint that takes the connection and
// never answers stops NewOpenAI within its ProbeTimeout, with an error
// naming the URL and the wait (it had held the start for a request's five
// minutes, saying nothing).
func TestOpenAISilentEndpoint(t *testing.T) {
	url := silentEndpoint(t)
	began := time.Now()
	_, err := embed.NewOpenAI(context.Background(), embed.OpenAIConfig{BaseURL: url + "/v1", Model: "m", ProbeTimeout: 300 * time.Millisecond})
	took := time.Since(began)
	if err == nil || !strings.Contains(err.Error(), url) || !strings.Contains(err.Error(), "no answer") || took > 5*time.Second {
		t.Errorf("a silent endpoint: %v after %v", err, took)
	}
}

// TestOpenAIHangingAttemptWithinRetryBudget: an endpoint that fails a
// request and then takes the retry and never answers is given up on
// within the retry budget, not after an attempt's five minutes (or the
// caller's deadline), and is unavailable.
func TestOpenAIHangingAttemptWithinRetryBudget(t *testing.T) {
	done := make(chan struct{})
	var failed atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failed.CompareAndSwap(false, true) {
			http.Error(w, "the model is loading", http.StatusServiceUnavailable)
			return
		}
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	defer srv.Close()
	defer close(done) // before Close, which waits for the handlers
	c, err := embed.NewOpenAI(context.Background(), embed.OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "m", Dimensions: 8, MaxRetryTime: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err = c.Embed(context.Background(), []string{"a text"})
	if took := time.Since(began); err == nil || !errors.Is(err, embed.ErrUnavailable) || took > 10*time.Second {
		t.Errorf("a failing, then hanging endpoint with a 2 s retry budget: %v after %v", err, took)
	}
}

// TestOpenAIDeadlineAfterFailures: an endpoint that answered 503 and then
// held the retry past the caller's deadline did not answer: the error
// wraps ErrUnavailable (what the service's breaker counts), as when its
// retries run out; a deadline that cut short the first attempt, with no
// failure before it, does not (the endpoint may be slow, not down).
func TestOpenAIDeadlineAfterFailures(t *testing.T) {
	const (
		pass = iota
		failThenHold
		hold
	)
	var mode, seen atomic.Int64
	p := newProxy(t, func(n int, w http.ResponseWriter, _ map[string]any) bool {
		switch mode.Load() {
		case failThenHold:
			if seen.Add(1) == 1 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusServiceUnavailable)
				io.WriteString(w, `{"error":{"message":"the model is loading","type":"server_error"}}`)
				return true
			}
			time.Sleep(3 * time.Second)
			return true
		case hold:
			time.Sleep(3 * time.Second)
			return true
		}
		return false
	}, nil)
	c := client(t, p.URL, nil)
	for _, tt := range []struct {
		name        string
		mode        int64
		unavailable bool
	}{{"503, then held past the deadline", failThenHold, true}, {"held past the deadline", hold, false}} {
		mode.Store(tt.mode)
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		_, err := c.Embed(ctx, []string{"a text"})
		cancel()
		if err == nil || errors.Is(err, embed.ErrUnavailable) != tt.unavailable {
			t.Errorf("%s: %v, want it to wrap ErrUnavailable: %v", tt.name, err, tt.unavailable)
		}
	}
	mode.Store(pass)
}

// TestOpenAIRefusesRedirects: an endpoint that redirects is an error that
// names where it pointed, at once, and the texts and the API key go
// nowhere else.
func TestOpenAIRefusesRedirects(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/embeddings", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	began := time.Now()
	_, err := embed.NewOpenAI(context.Background(), embed.OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "m", APIKey: "sk-secret"})
	if err == nil || !errors.Is(err, embed.ErrEndpoint) || !strings.Contains(err.Error(), "redirect to "+other.URL) || time.Since(began) > 5*time.Second {
		t.Errorf("a redirecting endpoint: %v after %v", err, time.Since(began))
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the redirect's target got %d requests", n)
	}
}
