package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/papersearch/papersearch/api/wire"
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
		{"get_paper", map[string]any{"id": "no-such-paper"}, "not found"},
		{"get_paper", map[string]any{"id": ""}, "id"},
	} {
		res := call(c.name, c.args)
		text := ""
		for _, ct := range res.Content {
			if tc, ok := ct.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		if !res.IsError || !strings.Contains(strings.ToLower(text), c.reason) {
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
}
