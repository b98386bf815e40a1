package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/embedding"
	"github.com/papersearch/papersearch/search/searchtest"
)

// The faulty endpoint's model, the dimension the index is built with and
// the one it answers when switched to another model.
const (
	faultyModel = "text-embedding-x"
	faultyDim   = 384
	otherDim    = 768
)

// The states of a faultyEndpoint.
const (
	endpointHealthy    int32 = iota
	endpointDown             // 503 to every request
	endpointOtherModel       // vectors of otherDim dimensions
	endpointRefusesKey       // 401 to every request
)

// faultyEndpoint is an OpenAI-compatible embeddings endpoint on 127.0.0.1
// answering hash vectors of faultyModel, which a test switches to answer
// 503s or another model's vectors, and back. It keeps every text it was
// asked to embed.
type faultyEndpoint struct {
	url   string
	state atomic.Int32
	mu    sync.Mutex
	asked []string
}

func newFaultyEndpoint(t *testing.T) *faultyEndpoint {
	t.Helper()
	ep := &faultyEndpoint{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		ep.mu.Lock()
		ep.asked = append(ep.asked, req.Input...)
		ep.mu.Unlock()
		dim := faultyDim
		switch ep.state.Load() {
		case endpointDown:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"error":{"message":"the model is loading","type":"server_error"}}`)
			return
		case endpointOtherModel:
			dim = otherDim
		case endpointRefusesKey:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided: sk-...42","type":"invalid_request_error","code":"invalid_api_key"}}`)
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		data := make([]item, len(req.Input))
		for i, text := range req.Input {
			data[i] = item{"embedding", i, hashvec.Of(text, dim)}
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": faultyModel,
			"usage": map[string]int{"prompt_tokens": len(req.Input), "total_tokens": len(req.Input)}})
	}))
	t.Cleanup(srv.Close)
	ep.url = srv.URL
	return ep
}

// askedFor reports whether the endpoint was ever asked to embed a text
// holding s.
func (ep *faultyEndpoint) askedFor(s string) bool {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	for _, a := range ep.asked {
		if strings.Contains(a, s) {
			return true
		}
	}
	return false
}

// faultyServer serves a real Server over a real Engine whose embedder is
// the OpenAI-compatible client of a faultyEndpoint, as
// PAPERSEARCH_EMBED_URL makes it (the default retry budget included), over
// a fresh embedded store.
func faultyServer(t *testing.T, opts search.Options) (*faultyEndpoint, string) {
	t.Helper()
	ep := newFaultyEndpoint(t)
	client, err := embed.NewOpenAI(context.Background(), embed.OpenAIConfig{BaseURL: ep.url + "/v1", Model: faultyModel})
	if err != nil {
		t.Fatal(err)
	}
	eng, _ := searchtest.Engine(t, client, opts)
	srv := httptest.NewServer(New(eng, catalog.New(eng, catalog.Options{}), Options{OpenWrites: true}))
	t.Cleanup(srv.Close)
	return ep, srv.URL
}

// papersBody is a POST /v1/papers body of n papers whose ids and texts
// start with prefix.
func papersBody(prefix string, n int) string {
	var b strings.Builder
	b.WriteString(`{"papers":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":"%s-%d","title":"%s paper %d","abstract":"%s: a study of topic %d in machine learning."}`,
			prefix, i, prefix, i, prefix, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

// TestWritesWithEndpointOfAnotherModel: an endpoint answering vectors of
// another dimension than the index's makes a write 502 problem+json naming
// the model and both dimensions, storing nothing and never 500; a hybrid
// search answers lexically, a dense one 502; and once searches have opened
// the breaker, writes still say why, not merely "unavailable".
func TestWritesWithEndpointOfAnotherModel(t *testing.T) {
	ep, url := faultyServer(t, search.Options{})
	if resp, body := do(t, "POST", url+"/v1/papers", "application/json", papersBody("kept", 1)); resp.StatusCode != 200 {
		t.Fatalf("POST with the endpoint healthy: %d %s", resp.StatusCode, body)
	}
	ep.state.Store(endpointOtherModel)
	wantBadGateway := func(what string, resp *http.Response, body []byte) {
		t.Helper()
		var p wire.Problem
		json.Unmarshal(body, &p)
		if resp.StatusCode != http.StatusBadGateway || p.Status != http.StatusBadGateway ||
			resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: %d %s, want a 502 problem", what, resp.StatusCode, body)
		}
		for _, s := range []string{faultyModel, fmt.Sprintf("answered %d-dimensional", otherDim), fmt.Sprintf("holds %d-dimensional", faultyDim)} {
			if !strings.Contains(p.Detail, s) {
				t.Errorf("%s: the detail %q does not say %q", what, p.Detail, s)
			}
		}
	}
	resp, body := do(t, "POST", url+"/v1/papers", "application/json", papersBody("other", 3))
	wantBadGateway("POST /v1/papers", resp, body)
	if !strings.Contains(string(body), "nothing of the batch was stored") {
		t.Errorf("POST /v1/papers: %s does not say nothing was stored", body)
	}
	resp, body = do(t, "PATCH", url+"/v1/papers/kept-0", "application/merge-patch+json", `{"abstract":"A new text to embed."}`)
	wantBadGateway("PATCH of the text", resp, body)
	resp, body = do(t, "POST", url+"/v1/embeddings", "application/json", `{"input":"graphs"}`)
	wantBadGateway("POST /v1/embeddings", resp, body)
	resp, body = do(t, "POST", url+"/v1/search", "application/json", `{"query":"topic","mode":"dense"}`)
	wantBadGateway("dense search", resp, body)

	for i := range embedding.BreakerFailures {
		resp, body := do(t, "POST", url+"/v1/search", "application/json", fmt.Sprintf(`{"query":"kept study of topic %d"}`, i))
		var sr wire.SearchResponse
		json.Unmarshal(body, &sr)
		if resp.StatusCode != 200 || len(sr.Degraded) != 1 || len(sr.Results) != 1 {
			t.Errorf("hybrid search: %d %s, want the kept paper, degraded to lexical", resp.StatusCode, body)
		}
	}
	resp, body = do(t, "POST", url+"/v1/papers", "application/json", papersBody("other", 3))
	wantBadGateway("POST /v1/papers once searches opened the breaker", resp, body)

	for _, id := range []string{"other-0", "other-2"} {
		if resp, body := do(t, "GET", url+"/v1/papers/"+id, "", ""); resp.StatusCode != 404 {
			t.Errorf("GET %s: %d %s, want nothing stored", id, resp.StatusCode, body)
		}
	}
	if resp, body := do(t, "GET", url+"/v1/papers/kept-0", "", ""); resp.StatusCode != 200 || strings.Contains(string(body), "A new text") {
		t.Errorf("GET kept-0 after the refused patch: %d %s", resp.StatusCode, body)
	}
}

// TestEndpointRefusingIsBadGateway: an endpoint that refuses the
// service's requests (its API key) makes a write and a dense search 502,
// not 500, saying the embedding endpoint failed, and nothing of the batch
// is stored; the endpoint's URL and message stay out of the answer.
func TestEndpointRefusingIsBadGateway(t *testing.T) {
	ep, url := faultyServer(t, search.Options{})
	ep.state.Store(endpointRefusesKey)
	for _, tt := range []struct{ method, path, body string }{
		{"POST", "/v1/papers", papersBody("refused", 2)},
		{"POST", "/v1/search", `{"query":"topic","mode":"dense"}`},
	} {
		resp, body := do(t, tt.method, url+tt.path, "application/json", tt.body)
		var p wire.Problem
		json.Unmarshal(body, &p)
		if resp.StatusCode != http.StatusBadGateway || !strings.HasSuffix(p.Type, "/embedding-endpoint-failed") ||
			!strings.Contains(p.Detail, "embedding endpoint") || strings.Contains(string(body), ep.url) || strings.Contains(string(body), "sk-") {
			t.Errorf("%s %s: %d %s, want a 502 saying the embedding endpoint failed", tt.method, tt.path, resp.StatusCode, body)
		}
	}
	if resp, body := do(t, "GET", url+"/v1/papers/refused-0", "", ""); resp.StatusCode != 404 {
		t.Errorf("GET refused-0: %d %s, want nothing stored", resp.StatusCode, body)
	}
}

// TestWritesFailFastWhileEndpointDown: with the endpoint down and the
// breaker open (by failing searches, or by readiness probes alone), a POST
// of 1 and of 1,000 papers, a PATCH of a paper's text and /v1/embeddings
// answer 503 with Retry-After within 2 s (the client would retry for 2
// minutes), without asking the endpoint, storing nothing; a write that
// needs no embedding still succeeds. Once the endpoint is back, writes
// alone bring the breaker's probe that closes it, and the same POSTs
// succeed.
func TestWritesFailFastWhileEndpointDown(t *testing.T) {
	for _, opener := range []string{"searches", "readyz"} {
		t.Run("opened by "+opener, func(t *testing.T) {
			ep, url := faultyServer(t, search.Options{QueryTimeout: 300 * time.Millisecond, BreakerCooldown: 500 * time.Millisecond})
			if resp, body := do(t, "POST", url+"/v1/papers", "application/json", papersBody("kept", 1)); resp.StatusCode != 200 {
				t.Fatalf("POST with the endpoint healthy: %d %s", resp.StatusCode, body)
			}
			ep.state.Store(endpointDown)
			if opener == "searches" {
				for i := range embedding.BreakerFailures {
					do(t, "POST", url+"/v1/search", "application/json", fmt.Sprintf(`{"query":"kept topic %d"}`, i))
				}
			}
			if resp, body := do(t, "GET", url+"/readyz", "", ""); !strings.Contains(string(body), `"status":"degraded"`) {
				t.Fatalf("readyz with the endpoint down: %d %s", resp.StatusCode, body)
			}

			one, thousand := papersBody("one", 1), papersBody("thousand", MaxIngestPapers)
			for _, w := range []struct{ name, method, path, ctype, body string }{
				{"POST of 1 paper", "POST", "/v1/papers", "application/json", one},
				{"POST of 1,000 papers", "POST", "/v1/papers", "application/json", thousand},
				{"PATCH of a text", "PATCH", "/v1/papers/kept-0", "application/merge-patch+json", `{"abstract":"patched: a new text."}`},
				{"POST /v1/embeddings", "POST", "/v1/embeddings", "application/json", `{"input":"embeddings: graphs"}`},
			} {
				start := time.Now()
				resp, body := do(t, w.method, url+w.path, w.ctype, w.body)
				took := time.Since(start)
				t.Logf("%s with the breaker open: %d in %v", w.name, resp.StatusCode, took.Round(time.Millisecond))
				if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || resp.Header.Get("Content-Type") != "application/problem+json" {
					t.Errorf("%s: %d (Retry-After %q) %s", w.name, resp.StatusCode, resp.Header.Get("Retry-After"), body)
				}
				if took > 2*time.Second {
					t.Errorf("%s took %v to be refused", w.name, took)
				}
			}
			for _, s := range []string{"one:", "thousand:", "patched:", "embeddings:"} {
				if ep.askedFor(s) {
					t.Errorf("a refused write (%s) was sent to the endpoint", s)
				}
			}
			for _, id := range []string{"one-0", "thousand-0", "thousand-999"} {
				if resp, _ := do(t, "GET", url+"/v1/papers/"+id, "", ""); resp.StatusCode != 404 {
					t.Errorf("GET %s after the refused POST: %d", id, resp.StatusCode)
				}
			}
			if resp, body := do(t, "PATCH", url+"/v1/papers/kept-0", "application/merge-patch+json", `{"tags":["still-writable"]}`); resp.StatusCode != 200 {
				t.Errorf("PATCH of tags alone, which needs no embedding: %d %s", resp.StatusCode, body)
			}

			ep.state.Store(endpointHealthy)
			deadline := time.Now().Add(15 * time.Second) // a bound on waiting, not a latency target
			for {
				resp, body := do(t, "POST", url+"/v1/papers", "application/json", one)
				if resp.StatusCode == 200 {
					break
				}
				if resp.StatusCode != 503 || time.Now().After(deadline) {
					t.Fatalf("POST once the endpoint is back: %d %s", resp.StatusCode, body)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if resp, body := do(t, "POST", url+"/v1/papers", "application/json", thousand); resp.StatusCode != 200 || !strings.Contains(string(body), `"new":1000`) {
				t.Errorf("POST of 1,000 papers once the endpoint is back: %d %.300s", resp.StatusCode, body)
			}
			if resp, body := do(t, "GET", url+"/v1/papers/thousand-999", "", ""); resp.StatusCode != 200 {
				t.Errorf("GET thousand-999: %d %s", resp.StatusCode, body)
			}
		})
	}
}
