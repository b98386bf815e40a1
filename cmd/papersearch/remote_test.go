package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func topIDs(t *testing.T, base, query string, k int) []string {
	t.Helper()
	body := fmt.Sprintf(`{"query":%q,"limit":%d}`, query, k)
	resp, err := http.Post(base+"/v1/search", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sr struct{ Results []struct{ ID string } }
	if err := json.NewDecoder(resp.Body).Decode(&sr); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(sr.Results))
	for i, r := range sr.Results {
		ids[i] = r.ID
	}
	return ids
}

// TestSecondInstanceOverHTTP starts papersearch on the local model (the
// default pair), then a second one whose embeddings come from the first's
// /v1/embeddings, asking for each model of the pair by name: both answer
// the same questions with the same top results.
func TestSecondInstanceOverHTTP(t *testing.T) {
	setEnv(t)
	t.Setenv("PAPERSEARCH_EMBEDDINGS_TOKEN_RATE", "0") // the second instance embeds through the first
	first, _, stop1 := startServe(t)
	defer stop1()

	t.Setenv("PAPERSEARCH_DATA_DIR", t.TempDir())
	t.Setenv("PAPERSEARCH_EMBED_URL", first+"/v1")
	second, logs, stop2 := startServe(t)
	defer stop2()
	if !strings.Contains(logs.String(), "embedding endpoint ready") || !strings.Contains(logs.String(), "seed corpus ingested") {
		t.Errorf("second instance did not seed through the endpoint:\n%s", logs)
	}
	for _, q := range []string{
		"methods that learn from expert value functions",
		"robots learning whole-body skills from human videos",
		"do language models remember more than people?",
		"legal compliance of web scraping agents",
		"reconstructing people and scenes from a single video",
	} {
		a, b := topIDs(t, first, q, 3), topIDs(t, second, q, 3)
		if strings.Join(a, ",") != strings.Join(b, ",") {
			t.Errorf("%q: top 3 differ: local %v, over HTTP %v", q, a, b)
		}
	}
}

// TestInterruptedRemoteIngestStoresNothingPartial ingests through an
// endpoint that starts refusing halfway: the batches acknowledged before are
// stored whole, nothing of the failed batch is, and a rerun completes the
// rest, re-embedding none of what was stored.
func TestInterruptedRemoteIngestStoresNothingPartial(t *testing.T) {
	setEnv(t)
	t.Setenv("PAPERSEARCH_EMBEDDINGS_TOKEN_RATE", "0") // the instance under test embeds through this one
	upstream, _, stop := startServe(t)
	defer stop()
	t.Setenv("PAPERSEARCH_LOG_LEVEL", "warn")

	var requests, failFrom atomic.Int64
	// The probe, then the first import batch (256 papers, each embedded
	// with its abstract's one sentence: 512 texts, 64 requests), then four
	// requests of the second batch, then refusals.
	failFrom.Store(1 + 64 + 4)
	proxy := failingProxy(t, upstream, &requests, &failFrom, http.StatusUnauthorized,
		`{"error":{"message":"key revoked","type":"invalid_request_error"}}`)

	t.Setenv("PAPERSEARCH_DATA_DIR", t.TempDir())
	t.Setenv("PAPERSEARCH_EMBED_URL", proxy.URL+"/v1")
	// One model, so every batch is one request (a pair asks for each of
	// its models).
	t.Setenv("PAPERSEARCH_EMBED_MODEL", "bge-small-en-v1.5")
	t.Setenv("PAPERSEARCH_EMBED_BATCH", "8")
	t.Setenv("PAPERSEARCH_EMBED_CONCURRENCY", "1")
	corpus := filepath.Join(t.TempDir(), "papers.jsonl")
	var buf bytes.Buffer
	for i := range 300 {
		fmt.Fprintf(&buf, `{"id":"p%03d","title":"Paper %d","abstract":"A study of topic number %d in machine learning."}`+"\n", i, i, i)
	}
	os.WriteFile(corpus, buf.Bytes(), 0o644)

	ctx := context.Background()
	err := run(ctx, []string{"ingest", corpus}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "key revoked") {
		t.Fatalf("ingest through a failing endpoint: err = %v", err)
	}

	var out bytes.Buffer
	failFrom.Store(1 << 40)
	if err := run(ctx, []string{"ingest", corpus}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "44 new, 0 updated, 256 unchanged") || !strings.Contains(out.String(), "44 embedded") {
		t.Errorf("rerun summary: %s (want the 256 stored before the failure unchanged, 44 new)", out.String())
	}
}

// TestCLIAgainstServer runs search and similar through PAPERSEARCH_SERVER.
func TestCLIAgainstServer(t *testing.T) {
	setEnv(t)
	base, _, stop := startServe(t)
	defer stop()
	t.Setenv("PAPERSEARCH_SERVER", base)
	t.Setenv("PAPERSEARCH_DATA_DIR", filepath.Join(t.TempDir(), "never-created"))
	var out bytes.Buffer
	if err := run(context.Background(), []string{"search", "why do people misjudge probabilities?", "--limit", "1"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Humans systematically misrepresent probability") {
		t.Errorf("remote search:\n%s", out.String())
	}
	id := topIDs(t, base, "hand object contact", 1)[0]
	out.Reset()
	if err := run(context.Background(), []string{"similar", "--json", "--limit", "2", id}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"rank": 2`) || strings.Contains(out.String(), `"id": "`+id+`"`) {
		t.Errorf("remote similar:\n%s", out.String())
	}
	if err := run(context.Background(), []string{"similar", "no-such-paper"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "404") && !strings.Contains(err.Error(), "not found") {
		t.Errorf("remote similar of an unknown id: %v", err)
	}
	// A flag's value the server refuses is a mistake in the command line,
	// named by its flag, as it is without a server.
	for args, flag := range map[string]string{"search x --mode fuzzy": "--mode must be", "similar " + id + " --by sideways": "--by must be",
		"recommend tag --since 2026-02-30": "--since must be"} {
		err := run(context.Background(), strings.Fields(args), io.Discard, io.Discard)
		if err == nil || !usageMistake(err) || !strings.HasPrefix(flagWords(err), flag) {
			t.Errorf("%s: %v (%q), want a usage mistake saying %q", args, err, flagWords(err), flag)
		}
	}
	// A refusal of what is not a flag's value (a watch's target the server
	// will not take) is no usage mistake.
	if err := run(context.Background(), []string{"watch", "add", "arxiv", "graphs\u202e"}, io.Discard, io.Discard); err == nil || usageMistake(err) {
		t.Errorf("watch add with a refused target: %v, usage mistake %v", err, err != nil && usageMistake(err))
	}
	if _, err := os.Stat(filepath.Join(os.Getenv("PAPERSEARCH_DATA_DIR"))); err == nil {
		t.Error("the CLI opened a local store although PAPERSEARCH_SERVER is set")
	}
}

// TestWriteThroughAFailingEndpointStoresNothing: a POST /v1/papers whose
// embedding endpoint starts answering 503 part way answers 503 with
// Retry-After within its retry budget, says nothing was stored, and
// nothing of the batch is; the failure opens the embedding breaker, so
// the same request is refused at once (503) until the breaker's probe
// finds the endpoint back, and then stores the batch whole (24 papers:
// three batches of 8, the third failing).
func TestWriteThroughAFailingEndpointStoresNothing(t *testing.T) {
	setEnv(t)
	t.Setenv("PAPERSEARCH_EMBEDDINGS_TOKEN_RATE", "0") // the instance under test embeds through this one
	upstream, _, stop := startServe(t)
	defer stop()
	var requests, failFrom atomic.Int64
	failFrom.Store(1 << 40)
	proxy := failingProxy(t, upstream, &requests, &failFrom, http.StatusServiceUnavailable,
		`{"error":{"message":"overloaded","type":"server_error"}}`)
	t.Setenv("PAPERSEARCH_DATA_DIR", t.TempDir())
	t.Setenv("PAPERSEARCH_EMBED_URL", proxy.URL+"/v1")
	t.Setenv("PAPERSEARCH_EMBED_MODEL", "bge-small-en-v1.5")
	t.Setenv("PAPERSEARCH_EMBED_BATCH", "8")
	t.Setenv("PAPERSEARCH_EMBED_CONCURRENCY", "1")
	t.Setenv("PAPERSEARCH_EMBED_RETRY_MAX", "2s")
	t.Setenv("PAPERSEARCH_SEED", "false") // the batch is what is measured
	base, _, stop2 := startServe(t)
	defer stop2()

	var body bytes.Buffer
	body.WriteString(`{"papers":[`)
	for i := range 24 {
		if i > 0 {
			body.WriteString(",")
		}
		fmt.Fprintf(&body, `{"id":"w%02d","title":"Paper %d","abstract":"A study of topic number %d in machine learning."}`, i, i, i)
	}
	body.WriteString(`]}`)
	post := func() (*http.Response, string) {
		resp, err := http.Post(base+"/v1/papers", "application/json", bytes.NewReader(body.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	failFrom.Store(requests.Load() + 3) // two batches embedded, then 503s
	start := time.Now()
	resp, b := post()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(b, "nothing of the batch was stored") {
		t.Errorf("POST through a failing endpoint: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	if took := time.Since(start); took > time.Minute {
		t.Errorf("the failure took %s to answer", took)
	}
	for _, id := range []string{"w00", "w15", "w23"} {
		if r, err := http.Get(base + "/v1/papers/" + id); err != nil || r.StatusCode != http.StatusNotFound {
			t.Errorf("%s after the failed POST: %v %v", id, err, r.StatusCode)
		} else {
			r.Body.Close()
		}
	}
	asked := requests.Load()
	if resp, b := post(); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("POST right after the failure, the breaker open: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	if n := requests.Load() - asked; n != 0 {
		t.Errorf("the POST refused with the breaker open sent %d requests to the endpoint", n)
	}
	failFrom.Store(1 << 40)
	deadline := time.Now().Add(time.Minute) // a bound on waiting, not a latency target
	for {
		resp, b := post()
		if resp.StatusCode == 200 {
			if !strings.Contains(b, `"new":24`) {
				t.Errorf("POST once the endpoint is back: %s", b)
			}
			break
		}
		if resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("POST once the endpoint is back: %d %s", resp.StatusCode, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// failingProxy passes requests to upstream, counting them in requests,
// until the failFrom-th, from which on it answers status with body as an
// OpenAI-compatible endpoint would; it is closed at the end of the test.
func failingProxy(t *testing.T, upstream string, requests, failFrom *atomic.Int64, status int, body string) *httptest.Server {
	t.Helper()
	target, _ := url.Parse(upstream)
	rp := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := requests.Add(1); n >= failFrom.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, body)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	return proxy
}
