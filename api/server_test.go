package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/atlas/corpusmap"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/sqlite"
	"github.com/papersearch/papersearch/search/storage"
	"github.com/papersearch/papersearch/seeds"
)

// testServer is one real server, over a store holding six seed papers and
// one paper whose id needs escaping, shared by the tests of this package.
var testServer struct {
	once   sync.Once
	engine *search.Engine
	store  storage.Store
	model  embed.Embedder
	url    string
	papers []papersearch.Paper
	err    error
	close  func()
}

func TestMain(m *testing.M) {
	code := m.Run()
	if testServer.close != nil {
		testServer.close()
	}
	os.Exit(code)
}

func server(t *testing.T) (string, []papersearch.Paper) {
	t.Helper()
	testServer.once.Do(func() {
		ctx := context.Background()
		dir, err := os.MkdirTemp("", "papersearch-api-")
		if err != nil {
			testServer.err = err
			return
		}
		model, err := embed.NewLocal(embed.LocalOptions{})
		if err != nil {
			testServer.err = err
			return
		}
		store, err := sqlite.Open(ctx, filepath.Join(dir, "papers.db"), model.Info())
		if err != nil {
			testServer.err = err
			return
		}
		eng, err := search.NewEngine(store, model, search.Options{})
		if err != nil {
			testServer.err = err
			return
		}
		papers, err := seeds.NeurIPS2026()
		if err != nil {
			testServer.err = err
			return
		}
		papers = papers[:6]
		papers = append(papers, papersearch.Paper{ID: "cs/0101001 ü", Title: "An old arXiv id",
			Abstract: "Identifiers with slashes, spaces and accents must round-trip through the URL path.",
			Authors:  []string{"Ada Lovelace"}, Venue: "arXiv", Year: 2001, Tags: []string{"history"}})
		if _, err := catalog.New(eng, catalog.Options{}).Ingest(ctx, papers, nil); err != nil {
			testServer.err = err
			return
		}
		mapping, stopMapping := context.WithCancel(ctx)
		keeper := corpusmap.New(eng, nil)
		go keeper.Keep(mapping, 20*time.Millisecond)
		srv := httptest.NewServer(New(eng, catalog.New(eng, catalog.Options{}), Options{Map: keeper}))
		testServer.url, testServer.papers, testServer.engine = srv.URL, papers, eng
		testServer.store, testServer.model = store, model
		testServer.close = func() { stopMapping(); srv.Close(); store.Close(); os.RemoveAll(dir) }
	})
	if testServer.err != nil {
		t.Fatal(testServer.err)
	}
	return testServer.url, testServer.papers
}

// emptyEngine returns an engine over a store of its own, empty, on the
// shared test server's model, and the store, closed when the test ends.
func emptyEngine(t *testing.T) (*search.Engine, *sqlite.Store) {
	t.Helper()
	server(t) // the shared model
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "papers.db"), testServer.model.Info())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	eng, err := search.NewEngine(store, testServer.model, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return eng, store
}

// do sends one request and returns the response with its body; headers are
// name, value pairs.
func do(t *testing.T, method, url, contentType, body string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" { // Go's client sends req.Host, not the header
			req.Host = headers[i+1]
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestSearchGetSimilar(t *testing.T) {
	url, papers := server(t)
	resp, body := do(t, "POST", url+"/v1/search", "application/json",
		`{"query":"how do brain-signal foundation models relate to hand-crafted features","limit":3}`)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var sr wire.SearchResponse
	if err := json.Unmarshal(body, &sr); err != nil {
		t.Fatal(err)
	}
	if len(sr.Results) != 3 || sr.Results[0].Rank != 1 || sr.Results[0].ID != papers[1].ID {
		t.Fatalf("results %+v, want the EEG paper (%s) first of 3", sr.Results, papers[1].ID)
	}
	if sr.Index.Store != "embedded" || sr.Index.Model != embed.DefaultLocalModel || sr.Index.Dim != 1152 || sr.Index.Papers != 7 {
		t.Errorf("index = %+v", sr.Index)
	}
	if !strings.Contains(string(body), `"authors":[]`) || !strings.Contains(string(body), `"took_ms"`) {
		t.Errorf("response lacks authors [] or took_ms: %s", body)
	}

	// Default limit, and every hit carries its paper.
	_, body = do(t, "POST", url+"/v1/search", "application/json", `{"query":"robots"}`)
	json.Unmarshal(body, &sr)
	if len(sr.Results) != 7 || sr.Results[0].Paper.Abstract == "" {
		t.Errorf("default limit gave %d results", len(sr.Results))
	}

	resp, body = do(t, "GET", url+"/v1/papers/"+papers[2].ID, "", "")
	var p papersearch.Paper
	if resp.StatusCode != 200 || json.Unmarshal(body, &p) != nil || p.ID != papers[2].ID || p.Abstract != papers[2].Abstract {
		t.Errorf("get: status %d body %s", resp.StatusCode, body)
	}

	resp, body = do(t, "GET", url+"/v1/papers/"+papers[3].ID+"/similar?limit=10", "", "")
	if resp.StatusCode != 200 {
		t.Fatalf("similar: status %d: %s", resp.StatusCode, body)
	}
	json.Unmarshal(body, &sr)
	if len(sr.Results) != 6 {
		t.Errorf("similar returned %d papers, want the 6 others", len(sr.Results))
	}
	for _, r := range sr.Results {
		if r.ID == papers[3].ID {
			t.Error("similar returned the paper itself")
		}
	}

	// Explanations, filters and pages.
	_, body = do(t, "POST", url+"/v1/search", "application/json",
		`{"query":"brain signal foundation models","limit":2,"explain":true,"filters":{"year_min":2026,"venues":["neurips"]}}`)
	var ex struct {
		Results []struct {
			Explanation *struct {
				DenseRank    int      `json:"dense_rank"`
				MatchedTerms []string `json:"matched_terms"`
				BestSentence string   `json:"best_sentence"`
			}
		}
		NextCursor *string `json:"next_cursor"`
		Degraded   []string
	}
	if err := json.Unmarshal(body, &ex); err != nil || len(ex.Results) != 2 || ex.Results[0].Explanation == nil ||
		ex.Results[0].Explanation.BestSentence == "" || ex.NextCursor == nil || ex.Degraded == nil {
		t.Errorf("explained search: %v %s", err, body)
	}
	_, body = do(t, "POST", url+"/v1/search", "application/json",
		fmt.Sprintf(`{"query":"brain signal foundation models","limit":2,"explain":true,"filters":{"year_min":2026,"venues":["neurips"]},"cursor":%q}`, *ex.NextCursor))
	var page2 wire.SearchResponse
	if json.Unmarshal(body, &page2); len(page2.Results) != 2 || page2.Results[0].Rank != 3 {
		t.Errorf("second page: %s", body)
	}
	_, body = do(t, "POST", url+"/v1/search", "application/json", `{"query":"brain","filters":{"year_max":2000}}`)
	if json.Unmarshal(body, &page2); len(page2.Results) != 0 || page2.NextCursor != nil {
		t.Errorf("filtered to nothing: %s", body)
	}
	resp, body = do(t, "GET", url+"/v1/papers/"+papers[3].ID+"/similar?limit=2&mode=lexical&explain=true&venue=NeurIPS&year_min=2020", "", "")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"lexical_rank":1`) {
		t.Errorf("similar with parameters: %d %s", resp.StatusCode, body)
	}

	// An id with a slash, a space and an accent, escaped in the path.
	resp, body = do(t, "GET", url+"/v1/papers/cs%2F0101001%20%C3%BC", "", "")
	if resp.StatusCode != 200 || !strings.Contains(string(body), "old arXiv") {
		t.Errorf("escaped id: status %d body %s", resp.StatusCode, body)
	}
	resp, _ = do(t, "GET", url+"/v1/papers/cs%2F0101001%20%C3%BC/similar?limit=2", "", "")
	if resp.StatusCode != 200 {
		t.Errorf("similar of escaped id: status %d", resp.StatusCode)
	}
}

func TestHealth(t *testing.T) {
	url, _ := server(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, body := do(t, "GET", url+path, "", "")
		if resp.StatusCode != 200 {
			t.Errorf("%s: status %d: %s", path, resp.StatusCode, body)
		}
	}
	// Readiness says what each local model computes in, and with what.
	_, body := do(t, "GET", url+"/readyz", "", "")
	var ready struct {
		Encoders map[string]embed.Choice `json:"encoders"`
	}
	if err := json.Unmarshal([]byte(body), &ready); err != nil {
		t.Fatal(err)
	}
	for _, name := range strings.Split(embed.DefaultLocalModel, "+") {
		c, ok := ready.Encoders[name]
		if !ok || c.Kernel == "" || c.Attention == "" || c.Measured["dense:"+string(c.Precision)+"/"+c.Kernel] <= 0 {
			t.Errorf("readyz encoders %+v: want %s's arithmetic, kernels and measured rates", ready.Encoders, name)
		}
	}
}

// TestBadRequests sends what clients get wrong and hostile input: every one
// gets a problem+json body with the right 4xx status, never a 5xx.
func TestBadRequests(t *testing.T) {
	url, _ := server(t)
	huge := `{"query":"` + strings.Repeat("a", DefaultMaxBody) + `"}`
	tests := []struct {
		name, method, path, ctype, body string
		status                          int
		pointer                         string // expected errors[0].pointer or parameter, if any
	}{
		{"malformed JSON", "POST", "/v1/search", "application/json", `{"query":`, 400, ""},
		{"not JSON", "POST", "/v1/search", "application/json", `query=hello`, 400, ""},
		{"empty body", "POST", "/v1/search", "application/json", ``, 400, ""},
		{"array body", "POST", "/v1/search", "application/json", `["a"]`, 400, ""},
		{"two values", "POST", "/v1/search", "application/json", `{"query":"a"}{"query":"b"}`, 400, ""},
		{"query wrong type", "POST", "/v1/search", "application/json", `{"query":42}`, 400, "/query"},
		{"limit wrong type", "POST", "/v1/search", "application/json", `{"query":"a","limit":"10"}`, 400, "/limit"},
		{"limit fractional", "POST", "/v1/search", "application/json", `{"query":"a","limit":2.5}`, 400, "/limit"},
		{"limit zero", "POST", "/v1/search", "application/json", `{"query":"a","limit":0}`, 400, "/limit"},
		{"limit too big", "POST", "/v1/search", "application/json", `{"query":"a","limit":101}`, 400, "/limit"},
		{"limit negative", "POST", "/v1/search", "application/json", `{"query":"a","limit":-3}`, 400, "/limit"},
		{"limit overflow", "POST", "/v1/search", "application/json", `{"query":"a","limit":1e40}`, 400, "/limit"},
		{"empty query", "POST", "/v1/search", "application/json", `{"query":""}`, 400, "/query"},
		{"blank query", "POST", "/v1/search", "application/json", `{"query":" \n\t "}`, 400, "/query"},
		{"missing query", "POST", "/v1/search", "application/json", `{"limit":5}`, 400, "/query"},
		{"control characters alone", "POST", "/v1/search", "application/json", `{"query":"\u0001\u0002","limit":1}`, 400, "/query"},
		{"invisible characters alone", "POST", "/v1/search", "application/json", `{"query":"\u202e\u200b "}`, 400, "/query"},
		{"unknown field", "POST", "/v1/search", "application/json", `{"query":"a","q":"b"}`, 400, "/q"},
		{"long query", "POST", "/v1/search", "application/json", `{"query":"` + strings.Repeat("word ", 2000) + `"}`, 400, "/query"},
		{"invalid UTF-8", "POST", "/v1/search", "application/json", "{\"query\":\"caf\xe9\"}", 400, ""},
		{"huge body", "POST", "/v1/search", "application/json", huge, 413, ""},
		{"wrong content type", "POST", "/v1/search", "text/csv", `a,b`, 415, ""},
		{"unknown id", "GET", "/v1/papers/no-such-paper", "", "", 404, ""},
		{"unknown id similar", "GET", "/v1/papers/no-such-paper/similar", "", "", 404, ""},
		{"control char in id", "GET", "/v1/papers/a%00b", "", "", 400, "id"},
		{"tab in id", "GET", "/v1/papers/a%09b/similar", "", "", 400, "id"},
		{"bidi override in id", "GET", "/v1/papers/%E2%80%AE/similar", "", "", 400, "id"},
		{"id too long", "GET", "/v1/papers/" + strings.Repeat("x", 300), "", "", 400, "id"},
		{"similar limit text", "GET", "/v1/papers/x/similar?limit=ten", "", "", 400, "limit"},
		{"similar limit zero", "GET", "/v1/papers/x/similar?limit=0", "", "", 400, "limit"},
		{"similar limit big", "GET", "/v1/papers/x/similar?limit=1000", "", "", 400, "limit"},
		{"filters wrong type", "POST", "/v1/search", "application/json", `{"query":"a","filters":{"year_min":"2020"}}`, 400, "/filters/year_min"},
		{"filters unknown field", "POST", "/v1/search", "application/json", `{"query":"a","filters":{"decade":1990}}`, 400, "/filters/decade"},
		{"a field in another case", "POST", "/v1/search", "application/json", `{"query":"a","LIMIT":100}`, 400, "/LIMIT"},
		{"a field twice, once in another case", "POST", "/v1/search", "application/json", `{"query":"a","QUERY":"b"}`, 400, "/QUERY"},
		{"bad mode", "POST", "/v1/search", "application/json", `{"query":"a","mode":"fuzzy"}`, 400, "/mode"},
		{"garbage cursor", "POST", "/v1/search", "application/json", `{"query":"a","cursor":"%%%"}`, 404, "/cursor"},
		{"unknown like id", "POST", "/v1/search", "application/json", `{"like":["no-such-paper"]}`, 404, "/like/0"},
		{"duplicate key", "POST", "/v1/search", "application/json", `{"query":"a","query":"b"}`, 400, "/query"},
		{"bad unlike id", "POST", "/v1/search", "application/json", `{"query":"a","unlike":["ok",""]}`, 400, "/unlike/1"},
		{"null in an array", "POST", "/v1/search", "application/json", `{"query":"a","filters":{"venues":["ICML",null]}}`, 400, "/filters/venues/1"},
		{"blank query beside no example", "POST", "/v1/search", "application/json", `{"query":"  ","like":[]}`, 400, "/query"},
		{"similar empty limit", "GET", "/v1/papers/x/similar?limit=", "", "", 400, "limit"},
		{"similar explain as a number", "GET", "/v1/papers/x/similar?explain=1", "", "", 400, "explain"},
		{"similar bad mode", "GET", "/v1/papers/x/similar?mode=fuzzy", "", "", 400, "mode"},
		{"similar garbage cursor", "GET", "/v1/papers/cs%2F0101001%20%C3%BC/similar?cursor=zzz", "", "", 404, "cursor"},
		{"similar long author", "GET", "/v1/papers/cs%2F0101001%20%C3%BC/similar?author=" + strings.Repeat("a", 201), "", "", 400, "author"},
		{"like wrong type", "POST", "/v1/search", "application/json", `{"like":"abc"}`, 400, "/like"},
		{"too many unlike", "POST", "/v1/search", "application/json", `{"query":"x","unlike":["` + strings.Repeat(`a","`, 20) + `a"]}`, 400, "/unlike"},
		{"no query no like", "POST", "/v1/search", "application/json", `{"unlike":["x"]}`, 400, "/query"},
		{"similar unknown param", "GET", "/v1/papers/x/similar?color=red", "", "", 400, "color"},
		{"similar bad year", "GET", "/v1/papers/x/similar?year_min=soon", "", "", 400, "year_min"},
		{"similar bad explain", "GET", "/v1/papers/x/similar?explain=maybe", "", "", 400, "explain"},
		{"a semicolon between parameters", "GET", "/v1/papers/x/similar?limit=500;x=1", "", "", 400, ""},
		{"a parameter badly escaped", "GET", "/v1/papers/x/similar?limit=2&mode=%zz", "", "", 400, ""},
		{"a cursor badly escaped", "GET", "/v1/papers/x/similar?cursor=%%%", "", "", 400, ""},
		{"unknown route", "GET", "/v1/nothing", "", "", 404, ""},
		{"wrong method", "GET", "/v1/search", "", "", 405, ""},
		{"wrong method on paper", "PUT", "/v1/papers/x", "application/json", `{}`, 405, ""},
	}
	statuses := map[int]int{}
	defer func() {
		t.Logf("reliability: bad inputs tried: %d kinds (malformed, mistyped, unknown or missing fields, out-of-range, oversized, invalid UTF-8, bad ids, cursors, routes and methods); statuses %v; 5xx: %d",
			len(tests), statuses, statuses[500]+statuses[502]+statuses[503])
	}()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := do(t, tt.method, url+tt.path, tt.ctype, tt.body)
			statuses[resp.StatusCode]++
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type %q, want application/problem+json", ct)
			}
			var p wire.Problem
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatalf("body is not a problem: %v: %s", err, body)
			}
			if p.Status != tt.status || p.Title == "" || p.Detail == "" || !strings.HasPrefix(p.Type, wire.ProblemType) ||
				p.Instance == "" || p.RequestID == "" || p.RequestID != resp.Header.Get("X-Request-Id") {
				t.Errorf("incomplete problem %+v", p)
			}
			// instance is a URI reference (RFC 9457): the path as sent,
			// percent-encoded, never a decoded control or bidi character.
			ref, err := neturl.Parse(p.Instance)
			sent, _ := neturl.Parse(url + tt.path)
			if err != nil || strings.IndexFunc(p.Instance, func(r rune) bool { return r <= ' ' || r >= 0x7f }) >= 0 || ref.Path != sent.Path {
				t.Errorf("instance %q is not the path %q as a URI reference", p.Instance, tt.path)
			}
			// One style: sentence-case titles, kebab-case types, no word
			// twice in a row.
			if rest := strings.ReplaceAll(p.Title[1:], "JSON", "json"); strings.ToLower(rest) != rest || strings.ContainsAny(p.Type[len(wire.ProblemType):], "_ ") {
				t.Errorf("problem title %q or type %q out of style", p.Title, p.Type)
			}
			for i, w := 1, strings.Fields(p.Detail); i < len(w); i++ {
				if strings.EqualFold(w[i], w[i-1]) {
					t.Errorf("problem detail %q repeats %q", p.Detail, w[i])
				}
			}
			if tt.pointer != "" {
				if len(p.Errors) == 0 || (p.Errors[0].Pointer != tt.pointer && p.Errors[0].Param != tt.pointer) {
					t.Errorf("errors %+v, want one for %s", p.Errors, tt.pointer)
				}
			}
		})
	}
}

// panicky is an engine that fails in every way a bug could.
type panicky struct{}

func (panicky) Search(context.Context, search.Query) (search.Results, error)  { panic("boom") }
func (panicky) RelevanceFloor(search.Results) (float32, bool)                 { panic("boom") }
func (panicky) Collections(context.Context) ([]papersearch.Collection, error) { panic("boom") }
func (panicky) Recommend(context.Context, search.RecommendQuery) (search.Results, error) {
	panic("boom")
}
func (panicky) CollectionPapers(context.Context, string) ([]papersearch.Paper, error) {
	panic("boom")
}
func (panicky) Retag(context.Context, []string, []string, []string) ([]papersearch.Paper, error) {
	panic("boom")
}
func (panicky) Similar(context.Context, search.SimilarQuery) (search.Results, error) {
	return search.Results{}, io.ErrUnexpectedEOF
}
func (panicky) Get(context.Context, string) (papersearch.Paper, error) { panic(http.ErrAbortHandler) }
func (panicky) Ping(context.Context) error                             { panic("boom") }
func (panicky) Index(context.Context) (papersearch.IndexInfo, error) {
	return papersearch.IndexInfo{}, nil
}
func (panicky) Models() []embed.ModelInfo         { return []embed.ModelInfo{{Name: "m", Dim: 2}} }
func (panicky) Encoders() map[string]embed.Choice { panic("boom") }
func (panicky) Embed(context.Context, string, []string) ([][]float32, int, error) {
	panic("boom")
}
func (panicky) Update(context.Context, papersearch.Paper) (papersearch.Paper, error) {
	panic("boom")
}
func (panicky) Add(context.Context, []papersearch.Paper, catalog.AddOptions) (catalog.AddSummary, error) {
	panic("boom")
}
func (panicky) Delete(context.Context, string) error { panic("boom") }
func (panicky) Import(context.Context, catalog.Source, catalog.ImportOptions) (catalog.ImportSummary, error) {
	panic("boom")
}

func TestPanicsBecomeProblems(t *testing.T) {
	var logs testenv.Buffer
	m := NewMetrics()
	srv := httptest.NewServer(New(panicky{}, panicky{}, Options{Metrics: m, Logger: slog.New(slog.NewTextHandler(&logs, nil))}))
	defer srv.Close()
	defer func() {
		// A panicking request is logged and counted like any other.
		if out := logs.String(); !strings.Contains(out, "msg=request method=POST path=/v1/search status=500") ||
			!strings.Contains(out, "panic serving POST /v1/search: boom") {
			t.Errorf("the panicking request was not logged:\n%s", out)
		}
		resp, body := do(t, "GET", srv.URL+"/metrics", "", "")
		if resp.StatusCode != 200 || !strings.Contains(string(body), `papersearch_http_requests_total{method="POST",route="/v1/search",status="500"} 1`) {
			t.Errorf("the panicking request was not counted:\n%s", body)
		}
	}()
	resp, body := do(t, "POST", srv.URL+"/v1/search", "application/json", `{"query":"a"}`)
	if resp.StatusCode != 500 || !strings.Contains(string(body), `"status":500`) || strings.Contains(string(body), "boom") {
		t.Errorf("panic: status %d body %s", resp.StatusCode, body)
	}
	resp, body = do(t, "GET", srv.URL+"/v1/papers/x/similar", "", "")
	if resp.StatusCode != 500 || resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("error: status %d body %s", resp.StatusCode, body)
	}
	// The server still answers after both.
	if resp, _ := do(t, "GET", srv.URL+"/healthz", "", ""); resp.StatusCode != 200 {
		t.Errorf("healthz after panic: %d", resp.StatusCode)
	}
}

// TestDeclaredTooLarge: a body whose Content-Length is past the limit is
// refused 413 at once, without waiting for bytes the client never sends
// (the server here has no read timeout: waiting would never end), and
// the connection closes.
func TestDeclaredTooLarge(t *testing.T) {
	srv := httptest.NewServer(New(echoEngine{}, echoEngine{}, Options{}))
	defer srv.Close()
	for _, tt := range []struct{ path, declared string }{
		{"/v1/search", "2000000"}, {"/v1/search", "999999999999"},
		{"/mcp", "999999999999"}, // the MCP SDK's transport, under the same rule
	} {
		declared := tt.declared
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(20 * time.Second))
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %s\r\n\r\n{\"query\":\"x\"}", tt.path, declared)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("Content-Length %s: %v", declared, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		conn.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || resp.Header.Get("Content-Type") != "application/problem+json" || !resp.Close {
			t.Errorf("%s, Content-Length %s: %d (close %v) %s", tt.path, declared, resp.StatusCode, resp.Close, body)
		}
	}
}

// TestSlowBodyTimesOut sends a body that stops arriving: the answer is 408
// problem+json, with no socket address or internal error text in it.
func TestSlowBodyTimesOut(t *testing.T) {
	srv := httptest.NewUnstartedServer(New(echoEngine{}, echoEngine{}, Options{}))
	srv.Config.ReadTimeout = 300 * time.Millisecond
	srv.Start()
	defer srv.Close()
	for _, path := range []string{"/v1/search", "/mcp"} {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"query\":", path)
		// The rest never comes; the server's read deadline passes.
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout || resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s, slow body: %d %s", path, resp.StatusCode, body)
		}
		if strings.Contains(string(body), "127.0.0.1") || strings.Contains(string(body), "i/o timeout") || strings.Contains(string(body), "tcp") {
			t.Errorf("%s: the problem exposes internals: %s", path, body)
		}
	}
}

// TestHead: every resource GET reads answers HEAD with GET's status and
// headers and no body, under the same rules (the key where GET needs
// it); another method's 405 lists HEAD in Allow.
func TestHead(t *testing.T) {
	base, papers := server(t)
	srv := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{APIKey: "k"}))
	defer srv.Close()
	for _, path := range []string{"/", "/healthz", "/openapi.json", "/metrics", "/v1/collections", "/v1/papers/" + papers[0].ID,
		"/v1/papers/" + papers[0].ID + "/similar?limit=2", "/v1/papers/no-such-paper", "/v1/models", "/v1/alerts"} {
		get, _ := do(t, "GET", srv.URL+path, "", "")
		head, body := do(t, "HEAD", srv.URL+path, "", "")
		if head.StatusCode != get.StatusCode || head.Header.Get("Content-Type") != get.Header.Get("Content-Type") || len(body) != 0 {
			t.Errorf("HEAD %s: %d %q, %d bytes; GET: %d %q", path, head.StatusCode, head.Header.Get("Content-Type"), len(body), get.StatusCode, get.Header.Get("Content-Type"))
		}
	}
	if resp, _ := do(t, "HEAD", srv.URL+"/v1/alerts", "", "", "Authorization", "Bearer k"); resp.StatusCode != 200 {
		t.Errorf("HEAD /v1/alerts with the key: %d", resp.StatusCode)
	}
	if resp, _ := do(t, "PUT", base+"/healthz", "", ""); resp.StatusCode != 405 || !strings.Contains(resp.Header.Get("Allow"), "HEAD") {
		t.Errorf("PUT /healthz: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}
