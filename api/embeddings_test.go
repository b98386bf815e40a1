package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/papersearch/papersearch/api/wire"
)

// TestEmbeddingsErrorsReadByOpenAIClients sends every kind of bad request
// to /v1/embeddings and reads the answer as the go-openai client does: each
// error, whichever layer raised it, carries OpenAI's error object with a
// message, so the client reports more than "status code: 400".
func TestEmbeddingsErrorsReadByOpenAIClients(t *testing.T) {
	srv := httptest.NewServer(New(echoEngine{}, Options{MaxBody: 4096, RateLimit: RateLimit{Rate: 1000, Burst: 1000}}))
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
