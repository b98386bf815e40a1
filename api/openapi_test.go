package api

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// TestOpenAPI validates real requests and responses of every endpoint
// against the served OpenAPI document, so the two cannot drift apart.
func TestOpenAPI(t *testing.T) {
	url, papers := server(t)
	ctx := context.Background()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(ctx); err != nil {
		t.Fatalf("the OpenAPI document is invalid: %v", err)
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range []string{"text/csv", "application/x-ndjson", "application/x-bibtex", "text/html"} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.PlainBodyDecoder)
	}
	writable := httptest.NewServer(New(testServer.engine, Options{OpenWrites: true}))
	defer writable.Close()

	id := papers[2].ID
	cases := []struct {
		name, base, method, path, accept, body string
		status                                 int
		validRequest                           bool
	}{
		{"search", url, "POST", "/v1/search", "", `{"query":"brain signals","limit":2,"explain":true,"filters":{"year_min":2020,"venues":["NeurIPS"]}}`, 200, true},
		{"search like", url, "POST", "/v1/search", "", `{"like":["` + id + `"],"limit":3,"mode":"dense"}`, 200, true},
		{"search csv", url, "POST", "/v1/search", "text/csv", `{"query":"robots","limit":2}`, 200, true},
		{"search ndjson", url, "POST", "/v1/search", "application/x-ndjson", `{"query":"robots","limit":2}`, 200, true},
		{"search bibtex", url, "POST", "/v1/search", "application/x-bibtex", `{"query":"robots","limit":2}`, 200, true},
		{"search bad limit", url, "POST", "/v1/search", "", `{"query":"robots","limit":500}`, 400, false},
		{"search malformed", url, "POST", "/v1/search", "", `{"query":`, 400, false},
		{"get", url, "GET", "/v1/papers/" + id, "", "", 200, true},
		{"get bibtex", url, "GET", "/v1/papers/" + id, "application/x-bibtex", "", 200, true},
		{"get unknown", url, "GET", "/v1/papers/nope", "", "", 404, true},
		{"similar", url, "GET", "/v1/papers/" + id + "/similar?limit=2&explain=true&mode=hybrid&venue=NeurIPS&year_min=2000", "", "", 200, true},
		{"similar bad limit", url, "GET", "/v1/papers/" + id + "/similar?limit=0", "", "", 400, false},
		{"embeddings", url, "POST", "/v1/embeddings", "", `{"input":["graph networks","proteins"],"model":"all-MiniLM-L6-v2"}`, 200, true},
		{"embeddings base64", url, "POST", "/v1/embeddings", "", `{"input":"graphs","encoding_format":"base64"}`, 200, true},
		{"embeddings bad model", url, "POST", "/v1/embeddings", "", `{"input":"graphs","model":"gpt-x"}`, 404, true},
		{"ingest", writable.URL, "POST", "/v1/papers", "", `{"papers":[{"id":"oa1","title":"Spec","abstract":"A paper about API specifications."}]}`, 200, true},
		{"ingest forbidden", url, "POST", "/v1/papers", "", `{"papers":[{"id":"oa2","abstract":"x"}]}`, 403, true},
		{"ingest invalid", writable.URL, "POST", "/v1/papers", "", `{"papers":[{"id":"oa3","abstract":" "}]}`, 400, true},
		{"delete", writable.URL, "DELETE", "/v1/papers/oa1", "", "", 204, true},
		{"delete unknown", writable.URL, "DELETE", "/v1/papers/oa1", "", "", 404, true},
		{"healthz", url, "GET", "/healthz", "", "", 200, true},
		{"readyz", url, "GET", "/readyz", "", "", 200, true},
		{"metrics", url, "GET", "/metrics", "", "", 200, true},
		{"openapi", url, "GET", "/openapi.json", "", "", 200, true},
		{"page", url, "GET", "/", "", "", 200, true},
	}
	covered := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, tc.base+tc.path, strings.NewReader(tc.body))
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			route, params, err := router.FindRoute(req)
			if err != nil {
				t.Fatalf("the document has no route for %s %s: %v", tc.method, tc.path, err)
			}
			covered[route.Method+" "+route.Path] = true
			in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
				Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
			if tc.validRequest {
				if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
					t.Errorf("request does not match the document: %v", err)
				}
			}
			// Validation may rewrite the body (it fills in defaults): send a fresh request.
			send, _ := http.NewRequest(tc.method, tc.base+tc.path, strings.NewReader(tc.body))
			send.Header = req.Header.Clone()
			resp, err := http.DefaultClient.Do(send)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode,
				Header: resp.Header, Body: io.NopCloser(bytes.NewReader(body)),
				Options: &openapi3filter.Options{IncludeResponseStatus: true}}
			if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
				t.Errorf("response does not match the document: %v\n%.300s", err, body)
			}
		})
	}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if !covered[method+" "+path] {
				t.Errorf("%s %s is in the document but no case exercises it", method, path)
			}
		}
	}
}
