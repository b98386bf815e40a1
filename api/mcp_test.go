package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/catalog"
)

// TestMCP: over /mcp, the tools answer what the REST routes answer for the
// same request, cut abstracts to max_chars, refuse bad arguments with the
// problem's reason as a tool error, and serve a paper whose id holds a
// slash, a space and an accent as a resource.
func TestMCP(t *testing.T) {
	base, papers := server(t)
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "papersearch-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		return res
	}
	decode := func(res *mcp.CallToolResult) wire.SearchResponse {
		t.Helper()
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		var out wire.SearchResponse
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	ranking := func(r wire.SearchResponse) string {
		var b strings.Builder
		for _, h := range r.Results {
			fmt.Fprintf(&b, "%s %d %.6f\n", h.ID, h.Rank, h.Score)
		}
		return b.String()
	}

	_, body := do(t, "POST", base+"/v1/search", "application/json", `{"query":"neural signals from the brain","limit":3}`)
	var rest wire.SearchResponse
	if err := json.Unmarshal(body, &rest); err != nil {
		t.Fatal(err)
	}
	got := call("search", map[string]any{"query": "neural signals from the brain", "limit": 3, "max_chars": 80})
	if got.IsError {
		t.Fatalf("search: %v", got.Content)
	}
	if g := decode(got); ranking(g) != ranking(rest) {
		t.Errorf("search over MCP:\n%s, over REST:\n%s", ranking(g), ranking(rest))
	} else {
		for _, h := range g.Results {
			if n := len([]rune(h.Paper.Abstract)); n > 80 || !strings.HasSuffix(h.Paper.Abstract, "…") {
				t.Errorf("%s: abstract of %d characters, want at most 80 ending in …: %q", h.ID, n, h.Paper.Abstract)
			}
		}
	}

	id := papers[6].ID // "cs/0101001 ü"
	_, body = do(t, "GET", base+"/v1/papers/"+url.PathEscape(papers[0].ID)+"/similar?limit=3", "", "")
	if err := json.Unmarshal(body, &rest); err != nil {
		t.Fatal(err)
	}
	if g := decode(call("similar", map[string]any{"id": papers[0].ID, "limit": 3})); ranking(g) != ranking(rest) {
		t.Errorf("similar over MCP:\n%s, over REST:\n%s", ranking(g), ranking(rest))
	}
	paper := call("get_paper", map[string]any{"id": id})
	if raw, _ := json.Marshal(paper.StructuredContent); paper.IsError || !strings.Contains(string(raw), `"Ada Lovelace"`) {
		t.Errorf("get_paper %q: %s", id, raw)
	}

	for _, c := range []struct {
		name   string
		args   map[string]any
		reason string
	}{
		{"search", map[string]any{"query": "graphs", "limit": 0}, "limit"},
		{"search", map[string]any{"query": "graphs", "limit": 101}, "limit"},
		{"search", map[string]any{"like": []string{"no-such-paper"}}, "not a paper here"},
		{"similar", map[string]any{"id": "no-such-paper"}, "not found"},
		{"similar", map[string]any{"id": papers[0].ID, "aspect": "colour"}, "aspect"},
		{"similar", map[string]any{"id": papers[0].ID, "sentences": []int{}}, "sentences"},
		{"similar", map[string]any{"id": papers[0].ID, "sentences": []int{0}, "mode": "fuzzy"}, "mode"},
		{"get_paper", map[string]any{"id": "no-such-paper"}, "not found"},
		{"get_paper", map[string]any{"id": ""}, "id must be"},
		{"search", map[string]any{"query": "graphs", "max_chars": -1}, "max_chars must be 0"},
		{"similar", map[string]any{"id": papers[0].ID, "max_chars": -5}, "max_chars must be 0"},
	} {
		res := call(c.name, c.args)
		text := ""
		for _, ct := range res.Content {
			if tc, ok := ct.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		if !res.IsError || !strings.Contains(strings.ToLower(text), c.reason) || strings.Contains(text, "id id") {
			t.Errorf("%s %v: error %v %q, want a tool error saying %q", c.name, c.args, res.IsError, text, c.reason)
		}
	}

	// A draft's paragraph: each result names the draft sentence it
	// answers best and its own closest sentence.
	draft := []string{"Decoding brain activity from EEG recordings is hard.", "Robots can learn manipulation by watching people."}
	rel := call("related_for_text", map[string]any{"text": strings.Join(draft, " "), "limit": 5, "max_chars": 100})
	if rel.IsError {
		t.Fatalf("related_for_text: %v", rel.Content)
	}
	raw, _ := json.Marshal(rel.StructuredContent)
	var related RelatedResponse
	if err := json.Unmarshal(raw, &related); err != nil || len(related.Results) == 0 || len(related.Results) > 5 {
		t.Fatalf("related_for_text: %v %s", err, raw)
	}
	drafts := map[string]bool{}
	for i, r := range related.Results {
		drafts[r.DraftSentence] = true
		if r.Rank != i+1 || r.MatchedSentence == "" || !strings.Contains(strings.Join(draft, "|"), r.DraftSentence) ||
			i > 0 && r.Score > related.Results[i-1].Score || len([]rune(r.Paper.Abstract)) > 100 {
			t.Errorf("related_for_text result %d: %+v", i, r)
		}
	}
	if len(drafts) != 2 {
		t.Errorf("related_for_text: results answer %d of the draft's 2 sentences: %s", len(drafts), raw)
	}
	for _, args := range []map[string]any{{"text": "  "}, {"text": "graphs", "limit": 0}} {
		if res := call("related_for_text", args); !res.IsError {
			t.Errorf("related_for_text %v: not an error", args)
		}
	}

	// list_collections: what GET /v1/collections answers.
	_, body = do(t, "GET", base+"/v1/collections", "", "")
	var restCollections wire.CollectionsResponse
	if err := json.Unmarshal(body, &restCollections); err != nil {
		t.Fatal(err)
	}
	lc := call("list_collections", nil)
	raw, _ = json.Marshal(lc.StructuredContent)
	var mcpCollections wire.CollectionsResponse
	if err := json.Unmarshal(raw, &mcpCollections); err != nil || lc.IsError || fmt.Sprint(mcpCollections) != fmt.Sprint(restCollections) ||
		len(restCollections.Collections) == 0 {
		t.Errorf("list_collections %s, GET /v1/collections %s", raw, body)
	}

	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "papersearch://papers/" + url.PathEscape(id)})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, c := range read.Contents {
		kinds[c.MIMEType] = c.Text
	}
	if !strings.Contains(kinds["application/json"], `"Ada Lovelace"`) || !strings.HasPrefix(kinds[MediaBibTeX], "@") {
		t.Errorf("resource of %q: %v", id, kinds)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "papersearch://papers/no-such-paper"}); err == nil {
		t.Error("an unknown paper's resource was read")
	}

	// recommend: what GET /v1/collections/{tag}/recommendations answers;
	// a collection's resource lists its papers.
	if _, err := catalog.New(testServer.engine, catalog.Options{}).Retag(ctx, []string{papers[0].ID, id}, []string{"mcp-list"}, nil); err != nil {
		t.Fatal(err)
	}
	defer catalog.New(testServer.engine, catalog.Options{}).Retag(ctx, []string{papers[0].ID, id}, nil, []string{"mcp-list"})
	_, body = do(t, "GET", base+"/v1/collections/mcp-list/recommendations?limit=3&method=centroid", "", "")
	if err := json.Unmarshal(body, &rest); err != nil || len(rest.Results) != 3 {
		t.Fatalf("recommendations over REST: %s", body)
	}
	rec := call("recommend", map[string]any{"tag": "MCP-list", "limit": 3, "method": "centroid", "max_chars": 50})
	if g := decode(rec); rec.IsError || ranking(g) != ranking(rest) || len(g.Results[0].Because) != 2 {
		t.Errorf("recommend over MCP:\n%s, over REST:\n%s", ranking(g), ranking(rest))
	}
	for args, reason := range map[string]string{`{"tag":"nobody-here"}`: "no paper", `{"tag":"mcp-list","method":"svm"}`: "method"} {
		var in map[string]any
		json.Unmarshal([]byte(args), &in)
		if res := call("recommend", in); !res.IsError || !strings.Contains(fmt.Sprint(res.Content[0]), reason) {
			t.Errorf("recommend %s: %v, want an error naming %s", args, res.Content, reason)
		}
	}
	coll, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "papersearch://collections/mcp-list"})
	if err != nil || len(coll.Contents) != 1 || !strings.Contains(coll.Contents[0].Text, `"uri":"papersearch://papers/`+url.PathEscape(id)+`"`) {
		t.Errorf("the collection's resource: %+v %v", coll, err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "papersearch://collections/nobody-here"}); err == nil {
		t.Error("an empty collection's resource was read")
	}
}

// headerTransport adds a header to every request.
type headerTransport struct{ key, value string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.key, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPImport: over /mcp, import and import_status take the write
// routes' key rule (refused without the key, with a wrong one), check the
// request as POST /v1/imports does, and run the import to its end.
func TestMCPImport(t *testing.T) {
	server(t)
	h := New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{APIKey: "k", Importer: bibtexImporter})
	srv := httptest.NewServer(h)
	defer func() { srv.Close(); h.Close() }()
	ctx := context.Background()
	connect := func(auth string) *mcp.ClientSession {
		t.Helper()
		tr := &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}
		if auth != "" {
			tr.HTTPClient = &http.Client{Transport: headerTransport{"Authorization", auth}}
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "papersearch-test", Version: "1"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	text := func(res *mcp.CallToolResult) string {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	req := map[string]any{"source": "bibtex", "content": importLibrary, "tags": []string{"via-mcp"}}
	for auth, want := range map[string]string{"": "401", "Bearer nope": "401"} {
		res, err := connect(auth).CallTool(ctx, &mcp.CallToolParams{Name: "import", Arguments: req})
		if err != nil || !res.IsError || !strings.Contains(text(res), want) {
			t.Errorf("import with Authorization %q: %v %v %q, want a tool error with %s", auth, err, res.IsError, text(res), want)
		}
	}
	cs := connect("Bearer k")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "import", Arguments: map[string]any{"source": "zotero", "content": "x"}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "zotero") || !strings.Contains(text(res), "bibtex") {
		t.Errorf("import from an unknown source: %v %q", err, text(res))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "import", Arguments: req})
	if err != nil || res.IsError {
		t.Fatalf("import: %v %q", err, text(res))
	}
	defer func() { // the shared engine's papers stay the other tests'
		for _, id := range []string{"bibtex:imp1", "doi:10.5/x"} {
			catalog.New(testServer.engine, catalog.Options{}).Delete(context.Background(), id)
		}
	}()
	var job wire.ImportJob
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &job); err != nil || job.ID == "" {
		t.Fatalf("import answered %s", raw)
	}
	for deadline := time.Now().Add(time.Minute); job.Status == "running" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "import_status", Arguments: map[string]any{"id": job.ID}})
		if err != nil || res.IsError {
			t.Fatalf("import_status: %v %q", err, text(res))
		}
		raw, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(raw, &job)
	}
	if job.Status != "done" || job.Stored != 2 || job.NoAbstract != 1 || !slices.Contains(job.Tags, "via-mcp") {
		t.Errorf("the import ended %+v, want done with 2 stored and 1 without an abstract, tagged via-mcp", job)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "import_status", Arguments: map[string]any{"id": "imp_nope"}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "no import has the id") {
		t.Errorf("import_status of an unknown id: %v %q", err, text(res))
	}
}

// TestMCPRecoversPanics: a tool whose engine panics answers an error, and
// the server (whose MCP handlers run on the SDK's goroutines) lives on.
func TestMCPRecoversPanics(t *testing.T) {
	srv := httptest.NewServer(New(panicky{}, panicky{}, Options{}))
	defer srv.Close()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "papersearch-test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for range 2 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "graphs"}})
		if err == nil && !res.IsError {
			t.Fatalf("a panicking search answered %v", res.StructuredContent)
		}
		if err != nil && !strings.Contains(err.Error(), "internal error") {
			t.Errorf("a panicking search: %v, want an internal error", err)
		}
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_collections"}); err == nil && !res.IsError {
		t.Error("a panicking list_collections answered")
	}
}

// TestMCPWaitsForTheStoreToSettle: while the store is being seeded, a tool
// call waits for it to settle and then answers from it; past SettleWait it
// is a tool error that says how far indexing is.
func TestMCPWaitsForTheStoreToSettle(t *testing.T) {
	server(t)
	ctx := context.Background()
	call := func(opts Options) (*mcp.CallToolResult, error) {
		srv := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), opts))
		defer srv.Close()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "papersearch-test", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
		if err != nil {
			return nil, err
		}
		defer cs.Close()
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "brain signals", "limit": 2}})
	}
	settled := make(chan struct{})
	time.AfterFunc(300*time.Millisecond, func() { close(settled) })
	start := time.Now()
	res, err := call(Options{Settled: settled})
	if err != nil || res.IsError {
		t.Fatalf("a search while seeding: %v %+v", err, res)
	}
	if took := time.Since(start); took < 250*time.Millisecond { // a lower bound: it waited
		t.Errorf("a search while seeding answered after %v, before the store settled", took)
	}
	never := make(chan struct{})
	res, err = call(Options{Settled: never, SettleWait: 100 * time.Millisecond,
		Ready: func() error { return errors.New("seeding the empty store: 5 of 19 papers done") }})
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if err != nil || !res.IsError || !strings.Contains(text.String(), "5 of 19 papers") {
		t.Errorf("a search past the wait: %v %q, want a tool error saying how far seeding is", err, text.String())
	}
}

// TestReadsWaitForTheStoreToSettle: over HTTP too, a search (and a read
// of a paper) while the store is being seeded waits for it to settle and
// then answers from it; past the wait it is a 503 with Retry-After that
// says how far seeding is, not an empty answer.
func TestReadsWaitForTheStoreToSettle(t *testing.T) {
	_, papers := server(t)
	serve := func(opts Options) *httptest.Server {
		return httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), opts))
	}
	settled := make(chan struct{})
	srv := serve(Options{Settled: settled})
	defer srv.Close()
	time.AfterFunc(300*time.Millisecond, func() { close(settled) })
	start := time.Now()
	resp, body := do(t, "POST", srv.URL+"/v1/search", "application/json", `{"query":"brain signals","limit":2}`)
	var res wire.SearchResponse
	if err := json.Unmarshal(body, &res); resp.StatusCode != 200 || err != nil || len(res.Results) == 0 {
		t.Fatalf("a search while seeding: %d %s", resp.StatusCode, body)
	}
	if took := time.Since(start); took < 250*time.Millisecond { // a lower bound: it waited
		t.Errorf("a search while seeding answered after %v, before the store settled", took)
	}

	never := make(chan struct{})
	srv = serve(Options{Settled: never, SettleWait: 100 * time.Millisecond,
		Ready: func() error { return errors.New("seeding the empty store: 5 of 19 papers done") }})
	defer srv.Close()
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/v1/search", `{"query":"brain signals"}`},
		{"GET", "/v1/papers/" + papers[0].ID, ""},
		{"GET", "/v1/papers/" + papers[0].ID + "/similar", ""},
		{"GET", "/v1/collections", ""},
	} {
		resp, body := do(t, r.method, srv.URL+r.path, "application/json", r.body)
		var p wire.Problem
		if err := json.Unmarshal(body, &p); resp.StatusCode != 503 || err != nil || resp.Header.Get("Retry-After") == "" ||
			!strings.Contains(p.Detail, "5 of 19 papers") {
			t.Errorf("%s %s past the wait: %d, Retry-After %q: %s", r.method, r.path, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
	// What is not a read of the papers is answered at once.
	if resp, body := do(t, "GET", srv.URL+"/healthz", "", ""); resp.StatusCode != 200 {
		t.Errorf("/healthz while seeding: %d %s", resp.StatusCode, body)
	}
}

// TestMCPHTTPErrorsAreProblems: what the MCP SDK refuses over HTTP (GET
// without a session, a POST without the Accept it needs) is a
// problem+json body like every other error, its status and Allow kept;
// an answer still streams.
func TestMCPHTTPErrorsAreProblems(t *testing.T) {
	base, _ := server(t)
	for _, tt := range []struct {
		method, accept string
		status         int
	}{
		{"GET", "text/event-stream", http.StatusMethodNotAllowed},
		{"POST", "application/json", http.StatusBadRequest},
	} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
		resp, b := do(t, tt.method, base+"/mcp", "application/json", body, "Accept", tt.accept)
		var p wire.Problem
		if err := json.Unmarshal(b, &p); err != nil || resp.StatusCode != tt.status || p.Status != tt.status || p.Detail == "" ||
			resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s /mcp (Accept %s): %d %q %s", tt.method, tt.accept, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
		if tt.status == http.StatusMethodNotAllowed && resp.Header.Get("Allow") == "" {
			t.Errorf("GET /mcp: 405 without Allow")
		}
	}
	resp, b := do(t, "POST", base+"/mcp", "application/json", ` 
	{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Accept", "application/json, text/event-stream")
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"tools"`) {
		t.Errorf("tools/list: %d %s", resp.StatusCode, b)
	}
	// A batch would run its calls under one request's share of the rate
	// limit: it is refused, whole.
	var batch []string
	for i := range 50 {
		batch = append(batch, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search","arguments":{"query":"graphs %d"}}}`, i, i))
	}
	resp, b = do(t, "POST", base+"/mcp", "application/json", "\n ["+strings.Join(batch, ",")+"]", "Accept", "application/json, text/event-stream")
	var p wire.Problem
	if err := json.Unmarshal(b, &p); err != nil || resp.StatusCode != http.StatusBadRequest || !strings.Contains(p.Detail, "batch") {
		t.Errorf("a batch of 50 calls: %d %s", resp.StatusCode, b)
	}
}

// TestMCPToolAnnotations: every tool says what it does to the store, so
// an assistant need not treat a search as destructive (MCP's default
// for a tool without annotations): all but import only read, and import
// adds without destroying.
func TestMCPToolAnnotations(t *testing.T) {
	base, _ := server(t)
	cs := mcpSession(t, base)
	res := listTools(t, cs)
	if len(res.Tools) < 8 {
		t.Fatalf("%d tools, want 8", len(res.Tools))
	}
	for _, tool := range res.Tools {
		a := tool.Annotations
		if a == nil {
			t.Errorf("%s: no annotations", tool.Name)
			continue
		}
		if tool.Name == "import" {
			if a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint {
				t.Errorf("import: %+v, want a write that destroys nothing", a)
			}
			continue
		}
		if !a.ReadOnlyHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: %+v, want read-only over this server's papers", tool.Name, a)
		}
	}
}

// TestMCPEmptyStoreSaysHowToFillIt: on a store with no papers, search and
// related_for_text answer their (empty) results and say, first, that the
// store is empty and how to add papers; on a store with papers they say
// nothing of it.
func TestMCPEmptyStoreSaysHowToFillIt(t *testing.T) {
	ctx := context.Background()
	eng, _ := emptyEngine(t)
	srv := httptest.NewServer(New(eng, catalog.New(eng, catalog.Options{}), Options{}))
	defer srv.Close()
	for _, c := range []struct {
		base  string
		empty bool
	}{{srv.URL, true}, {testServer.url, false}} {
		cs := mcpSession(t, c.base)
		for name, args := range map[string]map[string]any{
			"search":           {"query": "graph neural networks"},
			"related_for_text": {"text": "Graph neural networks learn on molecules. They predict properties."},
		} {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			if err != nil || res.IsError || len(res.Content) == 0 {
				t.Fatalf("%s: %v %+v", name, err, res)
			}
			first, _ := res.Content[0].(*mcp.TextContent)
			said := first != nil && strings.Contains(first.Text, "holds no papers yet") && strings.Contains(first.Text, "import")
			if said != c.empty {
				t.Errorf("%s, store empty %v: content %+v", name, c.empty, res.Content)
			}
			last, _ := res.Content[len(res.Content)-1].(*mcp.TextContent)
			var out struct {
				Results []json.RawMessage `json:"results"`
			}
			if last == nil || json.Unmarshal([]byte(last.Text), &out) != nil || c.empty != (len(out.Results) == 0) || res.StructuredContent == nil {
				t.Errorf("%s, store empty %v: the results are not the last content as JSON: %+v", name, c.empty, res.Content)
			}
		}
	}
}

// TestMCPInputSchemasBound: the tools' input schemas list the choices the
// engine takes (modes, aspects, methods), and an argument outside them or
// the engine's ranges is a tool error that says why in a few words.
func TestMCPInputSchemasBound(t *testing.T) {
	base, _ := server(t)
	ctx := context.Background()
	cs := mcpSession(t, base)
	res := listTools(t, cs)
	schemas := map[string]string{}
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		schemas[tool.Name] = string(b)
	}
	for tool, wants := range map[string][]string{
		"search":    {`"enum":["hybrid","dense","lexical"]`, `"enum":["background","method","result"]`},
		"similar":   {`"enum":["hybrid","dense","lexical"]`, `"enum":["background","method","result"]`},
		"recommend": {`"enum":["neighbours","centroid","rocchio","logistic"]`},
	} {
		for _, w := range wants {
			if !strings.Contains(schemas[tool], w) {
				t.Errorf("%s's input schema has no %s: %s", tool, w, schemas[tool])
			}
		}
	}
	for _, c := range []struct {
		args map[string]any
		says string
	}{
		{map[string]any{"query": "graphs", "limit": 0}, "limit must be between 1 and 100"},
		{map[string]any{"query": "graphs", "mode": "bogus"}, "bogus"},
		{map[string]any{"query": strings.Repeat("a", 4097)}, "must be at most 4096 characters"},
		{map[string]any{"query": "graphs", "aspect": "style"}, "style"},
	} {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: c.args})
		if err != nil || !r.IsError || len(r.Content) == 0 {
			t.Errorf("search %.60v: %v %+v, want a tool error", c.args, err, r)
			continue
		}
		if text, _ := r.Content[0].(*mcp.TextContent); text == nil || !strings.Contains(text.Text, c.says) {
			t.Errorf("search %.60v: %+v, want it to say %q", c.args, r.Content[0], c.says)
		} else if len(text.Text) > 300 {
			t.Errorf("search %.60v: a message of %d bytes", c.args, len(text.Text))
		}
	}
	if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "graphs", "mode": "dense", "limit": 2}}); err != nil || r.IsError {
		t.Errorf("search within bounds: %v %+v", err, r)
	}
}

// mcpSession connects an MCP client to the server at base, until the test
// ends.
func mcpSession(t *testing.T, base string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "papersearch-test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// listTools lists the tools of the server cs is connected to.
func listTools(t *testing.T, cs *mcp.ClientSession) *mcp.ListToolsResult {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestMCPPaperResourceURIs: a paper whose id holds a colon or a slash
// (every imported paper's: doi:, arxiv:, bibtex:) is read at the URI its
// collection's resource lists, at its id written as it is, and at its id
// percent-encoded whole.
func TestMCPPaperResourceURIs(t *testing.T) {
	ctx := context.Background()
	eng, _ := emptyEngine(t)
	cat := catalog.New(eng, catalog.Options{})
	ids := []string{"doi:10.1109/jproc.2021.3058954", "bibtex:k1"}
	for i, id := range ids {
		p := papersearch.Paper{ID: id, Title: fmt.Sprintf("Paper %d", i), Abstract: "Birds navigate by the magnetic field of the earth.", Tags: []string{"birds"}}
		if _, err := cat.Put(ctx, []papersearch.Paper{p}); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(New(eng, cat, Options{}))
	defer srv.Close()
	cs := mcpSession(t, srv.URL)
	coll, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "papersearch://collections/birds"})
	if err != nil || len(coll.Contents) != 1 {
		t.Fatalf("the collection's resource: %+v %v", coll, err)
	}
	var listed struct{ Papers []struct{ ID, URI string } }
	if err := json.Unmarshal([]byte(coll.Contents[0].Text), &listed); err != nil || len(listed.Papers) != 2 {
		t.Fatalf("the collection's resource: %s %v", coll.Contents[0].Text, err)
	}
	for _, p := range listed.Papers {
		for _, uri := range []string{p.URI, paperURIPrefix + p.ID, paperURIPrefix + strings.ReplaceAll(url.PathEscape(p.ID), ":", "%3A")} {
			read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil || len(read.Contents) == 0 || !strings.Contains(read.Contents[0].Text, `"id":"`+p.ID+`"`) {
				t.Errorf("%s: %+v %v", uri, read, err)
			}
		}
	}
}
