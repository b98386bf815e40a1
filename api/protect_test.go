package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/storage"
)

// withBearer sends a JSON request with the key as a bearer token, if any.
func withBearer(t *testing.T, method, url, key, body string) (*http.Response, []byte) {
	t.Helper()
	if key == "" {
		return do(t, method, url, "application/json", body)
	}
	return do(t, method, url, "application/json", body, "Authorization", "Bearer "+key)
}

func TestWriteEndpointsNeedTheKey(t *testing.T) {
	server(t)
	eng := testServer.engine
	const key = "s3cret-key"
	withKey := httptest.NewServer(New(eng, catalog.New(eng, catalog.Options{}), Options{APIKey: key}))
	defer withKey.Close()
	closed := httptest.NewServer(New(eng, catalog.New(eng, catalog.Options{}), Options{}))
	defer closed.Close()
	open := httptest.NewServer(New(eng, catalog.New(eng, catalog.Options{}), Options{OpenWrites: true}))
	defer open.Close()

	paper := `{"papers":[{"id":"w1","title":"Write test","abstract":"A paper written through the API about tensor sketching.","year":2024}]}`
	for _, tt := range []struct {
		name, url, key string
		status         int
	}{
		{"no key configured, not loopback", closed.URL, "", 403},
		{"missing key", withKey.URL, "", 401},
		{"wrong key", withKey.URL, "guess", 401},
		{"almost the key", withKey.URL, key + "x", 401},
		{"right key", withKey.URL, key, 200},
		{"loopback without a key", open.URL, "", 200},
	} {
		resp, body := withBearer(t, "POST", tt.url+"/v1/papers", tt.key, paper)
		if resp.StatusCode != tt.status {
			t.Errorf("%s: status %d, want %d: %s", tt.name, resp.StatusCode, tt.status, body)
		}
		if tt.status == 401 && resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: no WWW-Authenticate", tt.name)
		}
		if tt.status >= 400 && strings.Contains(string(body), key) {
			t.Errorf("%s: the key appears in the response", tt.name)
		}
	}
	// The scheme is case-insensitive (RFC 9110); another scheme is not the key.
	for auth, status := range map[string]int{"bearer " + key: 200, "BEARER " + key: 200, "Bearer  " + key + " ": 200,
		"Basic " + key: 401, key: 401, "Bearer": 401, "Bearerx " + key: 401} {
		resp, body := do(t, "POST", withKey.URL+"/v1/papers", "application/json", paper, "Authorization", auth)
		if resp.StatusCode != status {
			t.Errorf("Authorization %q: status %d, want %d: %s", auth, resp.StatusCode, status, body)
		}
	}
	// Two Authorization headers, the key in either: malformed, refused.
	for _, pair := range [][2]string{{"Bearer " + key, "Bearer nope"}, {"Bearer nope", "Bearer " + key}} {
		req, _ := http.NewRequest("POST", withKey.URL+"/v1/papers", strings.NewReader(paper))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Add("Authorization", pair[0])
		req.Header.Add("Authorization", pair[1])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("two Authorization headers %q: %d, want 400", pair, resp.StatusCode)
		}
	}
	// The ingested paper is searchable and idempotent by id.
	resp, body := withBearer(t, "POST", withKey.URL+"/v1/papers", key, paper)
	var ir wire.IngestResponse
	if json.Unmarshal(body, &ir); resp.StatusCode != 200 || ir.Unchanged != 1 || ir.Embedded != 0 {
		t.Errorf("re-ingest: %d %s", resp.StatusCode, body)
	}
	got, err := eng.Get(context.Background(), "w1")
	if err != nil || got.Title != "Write test" {
		t.Fatalf("ingested paper: %+v %v", got, err)
	}
	// One invalid paper rejects the request and stores nothing.
	resp, body = withBearer(t, "POST", withKey.URL+"/v1/papers", key,
		`{"papers":[{"id":"w2","abstract":"fine"},{"id":"w3","abstract":"  "}]}`)
	if resp.StatusCode != 400 || !strings.Contains(string(body), `"/papers/1/abstract"`) {
		t.Errorf("invalid paper: %d %s", resp.StatusCode, body)
	}
	if _, err := eng.Get(context.Background(), "w2"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a paper of a rejected request was stored: %v", err)
	}
	// A single paper object is accepted too.
	if resp, body := withBearer(t, "POST", withKey.URL+"/v1/papers", key, `{"id":"w4","abstract":"Single object."}`); resp.StatusCode != 200 {
		t.Errorf("single paper: %d %s", resp.StatusCode, body)
	}
	for _, bad := range []string{`{"papers":[]}`, `{"papers":[{"id":"x","abstract":"a","colour":"red"}]}`, `[1]`} {
		if resp, body := withBearer(t, "POST", withKey.URL+"/v1/papers", key, bad); resp.StatusCode != 400 {
			t.Errorf("%s: %d %s", bad, resp.StatusCode, body)
		}
	}
	// Delete.
	if resp, _ := withBearer(t, "DELETE", withKey.URL+"/v1/papers/w1", "", ""); resp.StatusCode != 401 {
		t.Errorf("delete without key: %d", resp.StatusCode)
	}
	if resp, _ := withBearer(t, "DELETE", withKey.URL+"/v1/papers/w1", key, ""); resp.StatusCode != 204 {
		t.Errorf("delete: %d", resp.StatusCode)
	}
	if resp, _ := withBearer(t, "DELETE", withKey.URL+"/v1/papers/w1", key, ""); resp.StatusCode != 404 {
		t.Errorf("second delete: %d", resp.StatusCode)
	}
	catalog.New(eng, catalog.Options{}).Delete(context.Background(), "w4")
}

func TestRateLimit(t *testing.T) {
	server(t)
	srv := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{RateLimit: RateLimit{Rate: 1, Burst: 3}}))
	defer srv.Close()
	var limited *http.Response
	for range 6 {
		resp, _ := withBearer(t, "GET", srv.URL+"/v1/papers/nope", "", "")
		if resp.Header.Get("RateLimit-Policy") != "1;w=1;burst=3" {
			t.Errorf("RateLimit-Policy %q", resp.Header.Get("RateLimit-Policy"))
		}
		if resp.StatusCode == 429 {
			limited = resp
		}
	}
	if limited == nil {
		t.Fatal("six requests at once within a burst of 3 were not limited")
	}
	if ra, err := strconv.Atoi(limited.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("Retry-After %q", limited.Header.Get("Retry-After"))
	}
	if !strings.Contains(limited.Header.Get("RateLimit"), "remaining=0") || limited.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("429 headers %v", limited.Header)
	}
	// Health is exempt.
	for range 5 {
		if resp, _ := withBearer(t, "GET", srv.URL+"/healthz", "", ""); resp.StatusCode != 200 {
			t.Errorf("healthz limited: %d", resp.StatusCode)
		}
	}
}

// downEngine is the shared engine with an embedder that cannot embed.
type downEngine struct{ *search.Engine }

func (downEngine) Embed(context.Context, string, []string) ([][]float32, int, error) {
	return nil, 0, errors.New("embedding endpoint down")
}

func TestReadyzReportsDegradedEmbedder(t *testing.T) {
	server(t)
	srv := httptest.NewServer(New(downEngine{testServer.engine}, catalog.New(testServer.engine, catalog.Options{}), Options{}))
	defer srv.Close()
	resp, body := withBearer(t, "GET", srv.URL+"/readyz", "", "")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"status":"degraded"`) || !strings.Contains(string(body), `"degraded":["dense"]`) {
		t.Errorf("readyz with the embedder down: %d %s", resp.StatusCode, body)
	}
}

// TestReadyzLogsChangesNotProbes: probes while the service is not ready
// (seeding) log one WARN line, not one each; becoming ready logs one INFO.
func TestReadyzLogsChangesNotProbes(t *testing.T) {
	server(t)
	var logs testenv.Buffer
	var seeding atomic.Bool
	seeding.Store(true)
	srv := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Ready: func() error {
		if seeding.Load() {
			return errors.New("seeding the empty store: 8 of 19 papers done")
		}
		return nil
	}}))
	defer srv.Close()
	for range 5 {
		if resp, _ := do(t, "GET", srv.URL+"/readyz", "", ""); resp.StatusCode != 503 {
			t.Fatalf("readyz while seeding: %d", resp.StatusCode)
		}
	}
	seeding.Store(false)
	for range 3 {
		if resp, _ := do(t, "GET", srv.URL+"/readyz", "", ""); resp.StatusCode != 200 {
			t.Fatalf("readyz once seeded: %d", resp.StatusCode)
		}
	}
	out := logs.String()
	if n := strings.Count(out, "level=WARN"); n != 1 || strings.Count(out, "readiness: ready") != 1 {
		t.Errorf("%d WARN lines for 5 probes while seeding (want 1), and the change to ready logged %d times (want 1):\n%s",
			n, strings.Count(out, "readiness: ready"), out)
	}
}
