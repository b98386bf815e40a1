package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
)

// TestEmbeddingsErrorsReadByOpenAIClients sends every kind of bad request
// to /v1/embeddings and reads the answer as the go-openai client does: each
// error, whichever layer raised it, carries OpenAI's error object with a
// message, so the client reports more than "status code: 400".
func TestEmbeddingsErrorsReadByOpenAIClients(t *testing.T) {
	srv := httptest.NewServer(New(echoEngine{}, echoEngine{}, Options{MaxBody: 4096, RateLimit: RateLimit{Rate: 1000, Burst: 1000}}))
	defer srv.Close()
	big := `{"input":"` + strings.Repeat("a", BatchBodyFactor*4096) + `"}`
	tests := []struct {
		name, method, ctype, body string
		status                    int
		param                     string
	}{
		{"malformed JSON", "POST", "application/json", `{"input":`, 400, ""},
		{"not JSON", "POST", "application/json", `input=a`, 400, ""},
		{"unknown field", "POST", "application/json", `{"input":"a","temperature":1}`, 400, "temperature"},
		{"model wrong type", "POST", "application/json", `{"input":"a","model":7}`, 400, "model"},
		{"input wrong type", "POST", "application/json", `{"input":7}`, 400, "input"},
		{"duplicate key", "POST", "application/json", `{"input":"a","input":"b"}`, 400, "input"},
		{"empty body", "POST", "application/json", ``, 400, ""},
		{"invalid UTF-8", "POST", "application/json", "{\"input\":\"\xff\"}", 400, ""},
		{"wrong dimensions", "POST", "application/json", `{"input":"a","dimensions":3}`, 400, "dimensions"},
		{"unknown model", "POST", "application/json", `{"input":"a","model":"gpt-9"}`, 404, "model"},
		{"wrong method", "GET", "", ``, 405, ""},
		{"too large", "POST", "application/json", big, 413, ""},
		{"wrong media type", "POST", "text/plain", `hello`, 415, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := do(t, tt.method, srv.URL+"/v1/embeddings", tt.ctype, tt.body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			var er openai.ErrorResponse
			if err := json.Unmarshal(body, &er); err != nil || er.Error == nil {
				t.Fatalf("no OpenAI error object (%v): %s", err, body)
			}
			if er.Error.Message == "" || er.Error.Type == "" || er.Error.Code == nil {
				t.Errorf("incomplete OpenAI error %+v", er.Error)
			}
			if tt.param != "" && (er.Error.Param == nil || *er.Error.Param != tt.param) {
				t.Errorf("param %v, want %q", er.Error.Param, tt.param)
			}
			var p wire.Problem // and it is still a problem+json body
			if json.Unmarshal(body, &p); p.Status != tt.status || resp.Header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("not a problem body: %s", body)
			}
		})
	}

	// The real client, end to end: its error is an *openai.APIError with
	// the server's message, for a handler error and for the body limit.
	cfg := openai.DefaultConfig("unused")
	cfg.BaseURL = srv.URL + "/v1"
	client := openai.NewClientWithConfig(cfg)
	for _, tc := range []struct {
		req    openai.EmbeddingRequest
		status int
		want   string
	}{
		{openai.EmbeddingRequest{Input: []string{"graphs"}, Model: "gpt-9"}, 404, "does not exist"},
		{openai.EmbeddingRequest{Input: []string{strings.Repeat("b", BatchBodyFactor*4096)}, Model: "m"}, 413, "exceeds"},
		{openai.EmbeddingRequest{Input: []string{"graphs"}, Model: "m", Dimensions: 3}, 400, "dimensions"},
	} {
		_, err := client.CreateEmbeddings(context.Background(), tc.req)
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != tc.status || !strings.Contains(apiErr.Message, tc.want) {
			t.Errorf("client error %v (%T), want an APIError %d mentioning %q", err, err, tc.status, tc.want)
		}
	}
	// Success still reads as before.
	res, err := client.CreateEmbeddings(context.Background(), openai.EmbeddingRequest{Input: []string{"graphs"}, Model: "m"})
	if err != nil || len(res.Data) != 1 || len(res.Data[0].Embedding) != 2 {
		t.Errorf("embeddings: %+v %v", res, err)
	}
	if resp, _ := do(t, http.MethodGet, srv.URL+"/v1/search", "", ""); resp.StatusCode != 405 {
		t.Errorf("GET /v1/search: %d", resp.StatusCode)
	}
}

// TestEmbeddingsTokenArraysDedupAndBounds: token arrays (as OpenAI's
// clients send them) embed as the text they spell; an id that is no token
// is 400 naming the input; identical inputs are embedded once; a request
// over the token bound is 400; a client past its token rate gets 429 with
// Retry-After; with ProtectEmbeddings the route follows the write rule.
func TestEmbeddingsTokenArraysDedupAndBounds(t *testing.T) {
	server(t)
	srv := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{}))
	defer srv.Close()
	embedOf := func(body string) ([][]float32, *http.Response, []byte) {
		t.Helper()
		resp, b := do(t, "POST", srv.URL+"/v1/embeddings", "application/json", body)
		var r struct {
			Data []struct {
				Embedding []float32 `json:"embedding"`
			} `json:"data"`
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		json.Unmarshal(b, &r)
		out := make([][]float32, len(r.Data))
		for i, d := range r.Data {
			out[i] = d.Embedding
		}
		return out, resp, b
	}
	// "graph neural networks" in cl100k_base.
	text, _, _ := embedOf(`{"input":["graph neural networks"]}`)
	tokens, resp, b := embedOf(`{"input":[[4539, 30828, 14488]]}`)
	if resp.StatusCode != 200 || len(tokens) != 1 || len(text) != 1 || dot(tokens[0], text[0]) < 0.9999 {
		t.Fatalf("token arrays: %d %s", resp.StatusCode, b)
	}
	if one, resp, b := embedOf(`{"input":[4539, 30828, 14488]}`); resp.StatusCode != 200 || len(one) != 1 || dot(one[0], text[0]) < 0.9999 {
		t.Errorf("one token array: %d %s", resp.StatusCode, b)
	}
	for _, body := range []string{`{"input":[[4539, -1]]}`, `{"input":[[4539, 100277]]}`, `{"input":[[100275]]}`, `{"input":[[100256]]}`, `{"input":[[]]}`, `{"input":[1.5]}`, `{"input":[["a"]]}`} {
		if _, resp, b := embedOf(body); resp.StatusCode != 400 || !strings.Contains(string(b), `"param":"input"`) {
			t.Errorf("%s: %d %s", body, resp.StatusCode, b)
		}
	}
	// A client in debt (two requests of 3 or more tokens, bursts of 3,
	// 0.01 a second) gets 429 with Retry-After.
	metered := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{EmbedTokens: RateLimit{Rate: 0.01, Burst: 3}}))
	defer metered.Close()
	for range 2 {
		if resp, b := do(t, "POST", metered.URL+"/v1/embeddings", "application/json", `{"input":"graph neural networks"}`); resp.StatusCode != 200 {
			t.Fatalf("within the token rate: %d %.200s", resp.StatusCode, b)
		}
	}
	if resp, b := do(t, "POST", metered.URL+"/v1/embeddings", "application/json", `{"input":"x"}`); resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "rate_limit_error") {
		t.Errorf("past the token rate: %d %q %.200s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}

	srv2 := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{}))
	defer srv2.Close()
	type usage struct {
		Data  []json.RawMessage
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		}
	}
	var one usage
	resp, b = do(t, "POST", srv2.URL+"/v1/embeddings", "application/json", `{"input":["identical text"]}`)
	if json.Unmarshal(b, &one); resp.StatusCode != 200 || one.Usage.PromptTokens == 0 {
		t.Fatalf("one input: %d %s", resp.StatusCode, b)
	}
	same := `{"input":["` + strings.Repeat(`identical text", "`, 511) + `identical text"]}`
	resp, b = do(t, "POST", srv2.URL+"/v1/embeddings", "application/json", same)
	var r usage
	if json.Unmarshal(b, &r); resp.StatusCode != 200 || len(r.Data) != 512 || r.Usage.PromptTokens != one.Usage.PromptTokens {
		t.Errorf("512 identical inputs: %d, %d vectors, %d tokens counted, want %d (once: the distinct text's)",
			resp.StatusCode, len(r.Data), r.Usage.PromptTokens, one.Usage.PromptTokens)
	}
	var many strings.Builder
	many.WriteString(`{"input":[`)
	for i := range 2048 {
		if i > 0 {
			many.WriteString(",")
		}
		fmt.Fprintf(&many, `"%d %s"`, i, strings.Repeat("token ", 70))
	}
	many.WriteString(`]}`)
	if resp, b := do(t, "POST", srv2.URL+"/v1/embeddings", "application/json", many.String()); resp.StatusCode != 400 || !strings.Contains(string(b), "max_tokens_per_request") {
		t.Errorf("2,048 inputs of 72 tokens: %d %.300s", resp.StatusCode, b)
	}

	// The write rule: beyond loopback (no OpenWrites) without a key, 403;
	// with a key, 401 without it and 200 with it.
	closed := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{ProtectEmbeddings: true}))
	defer closed.Close()
	if resp, b := do(t, "POST", closed.URL+"/v1/embeddings", "application/json", `{"input":"a"}`); resp.StatusCode != 403 {
		t.Errorf("protected, no key configured: %d %s", resp.StatusCode, b)
	}
	keyed := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{ProtectEmbeddings: true, APIKey: "k"}))
	defer keyed.Close()
	if resp, _ := do(t, "POST", keyed.URL+"/v1/embeddings", "application/json", `{"input":"a"}`); resp.StatusCode != 401 {
		t.Errorf("protected, no key sent: %d", resp.StatusCode)
	}
	if resp, b := do(t, "POST", keyed.URL+"/v1/embeddings", "application/json", `{"input":"a"}`, "Authorization", "Bearer k"); resp.StatusCode != 200 {
		t.Errorf("protected, key sent: %d %s", resp.StatusCode, b)
	}
}

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestFindModel: a model is found by its name, else by its key (the last
// part of a name with an organisation, in any case); the name wins.
func TestFindModel(t *testing.T) {
	models := []embed.ModelInfo{{Name: "bge-small-en-v1.5"}, {Name: "intfloat/e5-small-v2"}, {Name: "other/bge-small-en-v1.5"}}
	for name, want := range map[string]string{
		"bge-small-en-v1.5": "bge-small-en-v1.5", "BAAI/BGE-small-en-v1.5": "bge-small-en-v1.5", "other/bge-small-en-v1.5": "other/bge-small-en-v1.5",
		"e5-small-v2": "intfloat/e5-small-v2", "E5-Small-V2": "intfloat/e5-small-v2", "text-embedding-3-small": "", "": "",
	} {
		m, ok := findModel(models, name)
		if m.Name != want || ok != (want != "") {
			t.Errorf("findModel(%q) = %q, %v; want %q", name, m.Name, ok, want)
		}
	}
	base, _ := server(t) // the default models
	resp, b := do(t, "GET", base+"/v1/models/BAAI%2Fbge-small-en-v1.5", "", "")
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"id":"bge-small-en-v1.5"`) {
		t.Errorf("GET /v1/models/BAAI%%2Fbge-small-en-v1.5: %d %s", resp.StatusCode, b)
	}
}
