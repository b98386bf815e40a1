package api

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
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/atlas/corpusmap"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/catalog/imports"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
)

// TestOpenAPI validates real requests and responses of every endpoint
// against the served OpenAPI document, so the two cannot drift apart.
func TestOpenAPI(t *testing.T) {
	url, papers := server(t)
	waitForMap(t, url)
	doc := servedOpenAPI(t, url)
	// kin-openapi cannot decode a parameter whose schema uses "not" (a TODO
	// in its decoder), so its copy of the id schema goes without it;
	// TestOpenAPIStatesTheRules checks that keyword against ValidID.
	doc.Components.Schemas["PaperID"].Value.Not = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range []string{"text/csv", "application/x-ndjson", "application/x-bibtex", "text/html", MediaAtom} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.PlainBodyDecoder)
	}
	writable := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{OpenWrites: true}))
	defer writable.Close()
	importing, importer := importServer(t)
	resp, body := do(t, "POST", importing.URL+"/v1/imports", "application/json", `{"source":"bibtex","content":"@misc{oa-imp, abstract = {x}}"}`)
	var started wire.ImportJob
	if err := json.Unmarshal(body, &started); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("start an import: %d %s", resp.StatusCode, body)
	}
	waitImport(t, importing.URL, started.ID)
	defer func() {
		importer.Close() // the imports the cases start have finished
		do(t, "DELETE", importing.URL+"/v1/papers/bibtex:oa-imp", "", "")
	}()

	kept := newAlerts(t)
	watches, err := imports.OpenWatches(context.Background(), filepath.Join(t.TempDir(), "watches.db"), catalog.New(testServer.engine, catalog.Options{}),
		imports.Config{DataDir: t.TempDir()}.Open, nil) // never run here: Run is not called
	if err != nil {
		t.Fatal(err)
	}
	defer watches.Close()
	alerting := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{OpenWrites: true, Alerts: kept, Watches: watches}))
	defer alerting.Close()
	resp, body = do(t, "POST", alerting.URL+"/v1/alerts", "application/json", `{"query":"brain signals","window":"2w"}`)
	var alert wire.Alert
	if err := json.Unmarshal(body, &alert); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("make an alert: %d %s", resp.StatusCode, body)
	}

	resp, body = do(t, "POST", alerting.URL+"/v1/watches", "application/json", `{"source":"arxiv","target":"cat:cs.LG","every":"6h","since":"2026-11"}`)
	var watch wire.Watch
	if err := json.Unmarshal(body, &watch); err != nil || resp.StatusCode != http.StatusCreated || watch.Since != "2026-11-01" {
		t.Fatalf("make a watch: %d %s", resp.StatusCode, body)
	}

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
		{"collections", url, "GET", "/v1/collections", "", "", 200, true},
		{"collections unknown parameter", url, "GET", "/v1/collections?tag=x", "", "", 400, false},
		{"map", url, "GET", "/v1/map?level=0&titles=false&year_min=2000&venue=NeurIPS", "", "", 200, true},
		{"map lit by a search", url, "GET", "/v1/map?q=robots", "", "", 200, true},
		{"map bad level", url, "GET", "/v1/map?level=9", "", "", 400, false},
		{"map deeper than it is", url, "GET", "/v1/map?level=2&titles=true", "", "", 200, true},
		{"map lit twice", url, "GET", "/v1/map?q=robots&collection=history", "", "", 200, true},
		{"collection add", writable.URL, "POST", "/v1/collections/OA-List/papers", "", `{"ids":["` + id + `"]}`, 200, true},
		{"collection", url, "GET", "/v1/collections/oa-list/papers", "", "", 200, true},
		{"collection with a parameter", url, "GET", "/v1/collections/oa-list/papers?limit=2", "", "", 400, false},
		{"collection mark", writable.URL, "POST", "/v1/collections/oa-list/not-interested", "", `{"ids":["` + papers[3].ID + `"]}`, 200, true},
		{"recommendations", url, "GET", "/v1/collections/oa-list/recommendations?limit=2&method=neighbours&since=2000-01-01&by=published", "", "", 200, true},
		{"recommendations csv", url, "GET", "/v1/collections/oa-list/recommendations?limit=2&method=logistic", "text/csv", "", 200, true},
		{"recommendations of an empty collection", url, "GET", "/v1/collections/oa-nobody/recommendations", "", "", 404, true},
		{"collection feed", url, "GET", "/v1/collections/oa-list/feed.atom?window=36h&limit=3&method=centroid&year_min=2000", "", "", 200, true},
		{"collection feed bad window", url, "GET", "/v1/collections/oa-list/feed.atom?window=1y", "", "", 400, false},
		{"feed of an empty collection", url, "GET", "/v1/collections/oa-nobody/feed.atom", "", "", 404, true},
		{"recommendations bad method", url, "GET", "/v1/collections/oa-list/recommendations?method=svm", "", "", 400, false},
		{"collection unmark", writable.URL, "DELETE", "/v1/collections/oa-list/not-interested/" + papers[3].ID, "", "", 200, true},
		{"collection remove", writable.URL, "DELETE", "/v1/collections/oa-list/papers/" + id, "", "", 200, true},
		{"collection add unknown", writable.URL, "POST", "/v1/collections/oa-list/papers", "", `{"ids":["no-such-paper"]}`, 404, true},
		{"collection add none", writable.URL, "POST", "/v1/collections/oa-list/papers", "", `{"ids":[]}`, 400, false},
		{"similar", url, "GET", "/v1/papers/" + id + "/similar?limit=2&explain=true&mode=hybrid&venue=NeurIPS&year_min=2000", "", "", 200, true},
		{"similar by method", url, "GET", "/v1/papers/" + id + "/similar?aspect=method&explain=true&limit=3", "", "", 200, true},
		{"similar by sentences", url, "GET", "/v1/papers/" + id + "/similar?sentences=0,1&explain=true&limit=3", "", "", 200, true},
		{"similar by a sentence it lacks", url, "GET", "/v1/papers/" + id + "/similar?sentences=23", "", "", 404, true},
		{"similar bad aspect", url, "GET", "/v1/papers/" + id + "/similar?aspect=style", "", "", 400, false},
		{"similar bad sentences", url, "GET", "/v1/papers/" + id + "/similar?sentences=a", "", "", 400, false},
		{"similar bad limit", url, "GET", "/v1/papers/" + id + "/similar?limit=0", "", "", 400, false},
		{"similar limit twice", url, "GET", "/v1/papers/" + id + "/similar?limit=2&limit=3", "", "", 400, false},
		{"similar two venues", url, "GET", "/v1/papers/" + id + "/similar?venue=NeurIPS&venue=ICML&limit=2", "", "", 200, true},
		{"embeddings", url, "POST", "/v1/embeddings", "", `{"input":["graph networks","proteins"],"model":"` + embed.DefaultLocalModel + `"}`, 200, true},
		{"embeddings base64", url, "POST", "/v1/embeddings", "", `{"input":"graphs","encoding_format":"base64"}`, 200, true},
		{"embeddings bad model", url, "POST", "/v1/embeddings", "", `{"input":"graphs","model":"gpt-x"}`, 404, true},
		{"ingest", writable.URL, "POST", "/v1/papers", "", `{"papers":[{"id":"oa1","title":"Spec","abstract":"A paper about API specifications."}]}`, 200, true},
		{"ingest forbidden", url, "POST", "/v1/papers", "", `{"papers":[{"id":"oa2","abstract":"x"}]}`, 403, true},
		{"ingest invalid", writable.URL, "POST", "/v1/papers", "", `{"papers":[{"id":"oa3","abstract":" "}]}`, 400, false},
		{"ingest with nulls", writable.URL, "POST", "/v1/papers", "", `{"papers":[{"id":"oa4","title":null,"abstract":"Nulls are absent.","authors":null,"venue":null,"year":null,"url":null}]}`, 200, true},
		{"ingest an empty date", writable.URL, "POST", "/v1/papers", "", `{"id":"oa9","abstract":"No date.","date":""}`, 200, true},
		{"ingest one paper", writable.URL, "POST", "/v1/papers", "", `{"id":"oa5","abstract":"One paper alone.","year":2020.0,"url":"https://example.org/oa5"}`, 200, true},
		{"ingest with sources", writable.URL, "POST", "/v1/papers", "", `{"id":"oa7","abstract":"Two versions.","sources":[{"id":"arxiv:2401.00007","url":"https://arxiv.org/abs/2401.00007"},{"id":"doi:10.1/oa7","url":null}]}`, 200, true},
		{"get by a source id", writable.URL, "GET", "/v1/papers/arxiv:2401.00007", "", "", 200, true},
		{"ingest bad source", writable.URL, "POST", "/v1/papers", "", `{"id":"oa8","abstract":"x","sources":[{"id":""}]}`, 400, false},
		{"ingest bad url", writable.URL, "POST", "/v1/papers", "", `{"id":"oa6","abstract":"x","url":"javascript:alert(1)"}`, 400, false},
		{"search by method", url, "POST", "/v1/search", "", `{"query":"brain signals","like":["` + id + `"],"aspect":"method","explain":true,"limit":3}`, 200, true},
		{"search with nulls", url, "POST", "/v1/search", "", `{"query":"robots","like":null,"filters":null,"mode":null,"limit":null,"cursor":null,"explain":null}`, 200, true},
		{"search empty year range", url, "POST", "/v1/search", "", `{"query":"robots","filters":{"year_min":2030,"year_max":2000}}`, 200, true},
		{"search blank query with like", url, "POST", "/v1/search", "", `{"query":" ","like":["` + id + `"]}`, 200, true},
		{"search empty date bound", url, "POST", "/v1/search", "", `{"query":"robots","filters":{"since":""}}`, 400, false},
		{"search empty by", url, "POST", "/v1/search", "", `{"query":"robots","filters":{"by":""}}`, 400, false},
		{"search blank query alone", url, "POST", "/v1/search", "", `{"query":" "}`, 400, false},
		{"search unknown like", url, "POST", "/v1/search", "", `{"like":["no-such-paper"]}`, 404, true},
		{"search lexical like only", url, "POST", "/v1/search", "", `{"like":["` + id + `"],"mode":"lexical"}`, 400, false},
		{"embeddings model dimensions", url, "POST", "/v1/embeddings", "", `{"input":"graphs","dimensions":1152}`, 200, true},
		{"embeddings with one model of the pair", url, "POST", "/v1/embeddings", "", `{"input":"graphs","model":"e5-small-v2"}`, 200, true},
		{"embeddings of a model not here", url, "POST", "/v1/embeddings", "", `{"input":"graphs","model":"text-embedding-3-small"}`, 404, true},
		{"models", url, "GET", "/v1/models", "", "", 200, true},
		{"a model", url, "GET", "/v1/models/e5-small-v2", "", "", 200, true},
		{"a model not here", url, "GET", "/v1/models/text-embedding-3-small", "", "", 404, true},
		{"embeddings with a model named with its organisation", url, "POST", "/v1/embeddings", "", `{"input":"graphs","model":"intfloat/E5-small-v2"}`, 200, true},
		{"models with a parameter", url, "GET", "/v1/models?limit=3", "", "", 400, false},
		{"embeddings other dimensions", url, "POST", "/v1/embeddings", "", `{"input":"graphs","dimensions":3}`, 400, false},
		{"patch", writable.URL, "PATCH", "/v1/papers/oa5", "", `{"title":"Patched","venue":null}`, 200, true},
		{"patch the id", writable.URL, "PATCH", "/v1/papers/oa5", "", `{"id":"oa6"}`, 409, true},
		{"delete", writable.URL, "DELETE", "/v1/papers/oa1", "", "", 204, true},
		{"delete nulls", writable.URL, "DELETE", "/v1/papers/oa4", "", "", 204, true},
		{"delete one", writable.URL, "DELETE", "/v1/papers/oa5", "", "", 204, true},
		{"delete with sources", writable.URL, "DELETE", "/v1/papers/oa7", "", "", 204, true},
		{"delete the dateless", writable.URL, "DELETE", "/v1/papers/oa9", "", "", 204, true},
		{"delete unknown", writable.URL, "DELETE", "/v1/papers/oa1", "", "", 404, true},
		{"import", importing.URL, "POST", "/v1/imports", "", `{"source":"bibtex","content":"@misc{oa-imp, abstract = {x}}","tags":["OpenAPI"]}`, 202, true},
		{"import invalid", importing.URL, "POST", "/v1/imports", "", `{"source":"bibtex","content":"x","max":5}`, 400, false},
		{"import not configured", writable.URL, "POST", "/v1/imports", "", `{"source":"csl","content":"[]"}`, 501, true},
		{"import status", importing.URL, "GET", "/v1/imports/" + started.ID, "", "", 200, true},
		{"import unknown", importing.URL, "GET", "/v1/imports/imp_none", "", "", 404, true},
		{"cancel an ended import", importing.URL, "POST", "/v1/imports/" + started.ID + "/cancel", "", "", 409, true},
		{"cancel an unknown import", importing.URL, "POST", "/v1/imports/imp_none/cancel", "", "", 404, true},
		{"alert make", alerting.URL, "POST", "/v1/alerts", "", `{"collection":"oa-list","filters":{"venues":["NeurIPS"]},"window":null,"limit":5}`, 201, true},
		{"alert make with both", alerting.URL, "POST", "/v1/alerts", "", `{"collection":"oa-list","query":"robots"}`, 400, false},
		{"alert make with since", alerting.URL, "POST", "/v1/alerts", "", `{"query":"robots","filters":{"since":"2026-01-01"}}`, 400, false},
		{"alert make not kept", writable.URL, "POST", "/v1/alerts", "", `{"query":"robots"}`, 501, true},
		{"alerts", alerting.URL, "GET", "/v1/alerts", "", "", 200, true},
		{"alert", alerting.URL, "GET", "/v1/alerts/" + alert.ID, "", "", 200, true},
		{"alert unknown", alerting.URL, "GET", "/v1/alerts/none", "", "", 404, true},
		{"alert feed", alerting.URL, "GET", "/v1/alerts/" + alert.ID + "/feed.atom", "", "", 200, true},
		{"alert feed with a parameter", alerting.URL, "GET", "/v1/alerts/" + alert.ID + "/feed.atom?limit=2", "", "", 400, false},
		{"alert delete", alerting.URL, "DELETE", "/v1/alerts/" + alert.ID, "", "", 204, true},
		{"alert feed deleted", alerting.URL, "GET", "/v1/alerts/" + alert.ID + "/feed.atom", "", "", 404, true},
		{"watch make", alerting.URL, "POST", "/v1/watches", "", `{"source":"openreview","target":"ICLR.cc/2027/Conference","tags":["iclr"],"max":null,"every":"1w"}`, 201, true},
		{"watch make with since for openreview", alerting.URL, "POST", "/v1/watches", "", `{"source":"openreview","target":"x","since":"2026-01-01"}`, 400, false},
		{"watch make of a file source", alerting.URL, "POST", "/v1/watches", "", `{"source":"bibtex","target":"x"}`, 400, false},
		{"watch make not run", writable.URL, "POST", "/v1/watches", "", `{"source":"arxiv","target":"x"}`, 501, true},
		{"watches", alerting.URL, "GET", "/v1/watches", "", "", 200, true},
		{"watch", alerting.URL, "GET", "/v1/watches/" + watch.ID, "", "", 200, true},
		{"watch run", alerting.URL, "POST", "/v1/watches/" + watch.ID + "/run", "", "", 202, true},
		{"watch unknown", alerting.URL, "GET", "/v1/watches/w_none", "", "", 404, true},
		{"watch delete", alerting.URL, "DELETE", "/v1/watches/" + watch.ID, "", "", 204, true},
		{"watch run deleted", alerting.URL, "POST", "/v1/watches/" + watch.ID + "/run", "", "", 404, true},
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

// servedOpenAPI loads and validates the document a server serves.
func servedOpenAPI(t *testing.T, base string) *openapi3.T {
	t.Helper()
	resp, body := do(t, "GET", base+"/openapi.json", "", "")
	if resp.StatusCode != 200 {
		t.Fatalf("/openapi.json: %d", resp.StatusCode)
	}
	doc, err := openapi3.NewLoader().LoadFromData(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the OpenAPI document is invalid: %v", err)
	}
	return doc
}

// TestOpenAPIStatesTheRules checks that the document states the limits
// and rules the server enforces, from the constants that define them, so
// a schema-driven client never guesses.
func TestOpenAPIStatesTheRules(t *testing.T) {
	url, _ := server(t)
	doc := servedOpenAPI(t, url)
	schema := func(name string) *openapi3.Schema { return doc.Components.Schemas[name].Value }
	prop := func(s, p string) *openapi3.Schema { return schema(s).Properties[p].Value }
	eq := func(what string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: the document says %v, the server %v", what, got, want)
		}
	}
	eq("id maxLength", *schema("PaperID").MaxLength, papersearch.MaxIDLength)
	eq("input id maxLength", *prop("PaperInput", "id").MaxLength, papersearch.MaxIDLength)
	eq("year minimum", *prop("PaperInput", "year").Min, papersearch.MinYear)
	eq("year maximum", *prop("PaperInput", "year").Max, papersearch.MaxYear)
	eq("filter year maximum", *prop("Filter", "year_max").Max, papersearch.MaxYear)
	eq("venues maxItems", *prop("Filter", "venues").MaxItems, papersearch.MaxFilterVenues)
	eq("author maxLength", *prop("Filter", "author").MaxLength, papersearch.MaxAuthorFilter)
	eq("query maxLength", *prop("SearchRequest", "query").MaxLength, search.MaxQueryLength)
	eq("limit maximum", *prop("SearchRequest", "limit").Max, search.MaxLimit)
	eq("like maxItems", *prop("SearchRequest", "like").MaxItems, search.MaxExamples)
	eq("papers maxItems", *prop("IngestRequest", "papers").MaxItems, MaxIngestPapers)
	eq("inputs maxItems", *prop("EmbeddingsRequest", "input").OneOf[1].Value.MaxItems, MaxEmbeddingInputs)
	eq("dimensions", prop("EmbeddingsRequest", "dimensions").Enum, []any{float64(testServer.model.Info().Dim), nil})
	url3 := prop("PaperInput", "url").AnyOf[2].Value
	eq("url pattern", url3.Pattern, papersearch.URLPattern)
	eq("url maxLength", *url3.MaxLength, papersearch.MaxURLLength)
	eq("title maxLength", *prop("PaperInput", "title").MaxLength, papersearch.MaxTitleLength)
	eq("abstract maxLength", *prop("PaperInput", "abstract").MaxLength, papersearch.MaxAbstractLength)
	eq("venue maxLength", *prop("PaperInput", "venue").MaxLength, papersearch.MaxVenueLength)
	eq("authors maxItems", *prop("PaperInput", "authors").MaxItems, papersearch.MaxAuthors)
	eq("author maxLength", *prop("PaperInput", "authors").Items.Value.MaxLength, papersearch.MaxAuthorLength)
	tags := prop("PaperInput", "tags")
	eq("tags maxItems", *tags.MaxItems, papersearch.MaxTags)
	eq("tag pattern", tags.Items.Value.Pattern, papersearch.TagPattern)
	eq("tag maxLength", *tags.Items.Value.MaxLength, len(papersearch.NotInterestedTag(strings.Repeat("a", papersearch.MaxTagLength))))
	eq("filter tags maxItems", *prop("Filter", "tags").MaxItems, papersearch.MaxFilterTags)
	eq("map level maximum", *doc.Paths.Find("/v1/map").Get.Parameters.GetByInAndName("query", "level").Schema.Value.Max, corpusmap.Levels-1)
	alertTag := prop("AlertRequest", "collection").AnyOf[2].Value // null, "" (none), or a collection
	eq("alert collection maxLength", *alertTag.MaxLength, papersearch.MaxTagLength)
	eq("alert collection pattern", alertTag.Pattern, papersearch.CollectionTagPattern)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if p := op.Parameters.GetByInAndName("path", "tag"); p != nil {
				eq(method+" "+path+" tag maxLength", *p.Schema.Value.MaxLength, papersearch.MaxTagLength)
				eq(method+" "+path+" tag pattern", p.Schema.Value.Pattern, papersearch.CollectionTagPattern)
			}
		}
	}
	eq("alert window pattern", prop("AlertRequest", "window").Pattern, papersearch.PeriodPattern)
	eq("alert limit maximum", *prop("AlertRequest", "limit").Max, MaxFeedLimit)
	eq("watch every pattern", prop("WatchRequest", "every").Pattern, papersearch.PeriodPattern)
	eq("watch target maxLength", *prop("WatchRequest", "target").MaxLength, imports.MaxWatchTarget)
	eq("watch max maximum", *prop("WatchRequest", "max").Max, imports.MaxPapers)
	eq("paper date pattern", prop("PaperInput", "date").AnyOf[2].Value.Pattern, papersearch.DatePattern)
	eq("patch date pattern", prop("PaperPatch", "date").AnyOf[2].Value.Pattern, papersearch.DatePattern)
	eq("watch since pattern", prop("WatchRequest", "since").Pattern, papersearch.DatePattern)
	eq("watch sources", prop("WatchRequest", "source").Enum, imports.WatchSources())
	for _, name := range []string{"Paper", "PaperInput", "PaperPatch"} {
		var enum []string
		for _, v := range prop(name, "type").Enum {
			if v, ok := v.(string); ok && v != "" {
				enum = append(enum, v)
			}
		}
		eq(name+" type enum", strings.Join(enum, ","), strings.Join(papersearch.Types(), ","))
	}

	// The id's "no control characters" is a regular expression that says
	// the same as ValidID, character by character.
	ctrl := regexp.MustCompile(schema("PaperID").Not.Value.Pattern)
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if got, want := !ctrl.MatchString(string(r)), papersearch.ValidID(string(r)); got != want {
			t.Errorf("id %q: the document allows it: %v, the server: %v", r, got, want)
		}
	}
	// An import's and a watch's target: the characters the document
	// refuses are imports.RefusedInTarget's, exactly.
	for name, target := range map[string]*openapi3.Schema{
		"import target": schema("ImportRequest").OneOf[0].Value.Properties["target"].Value,
		"watch target":  prop("WatchRequest", "target"),
	} {
		refused := regexp.MustCompile(target.Not.Value.Pattern)
		for r := rune(0); r <= unicode.MaxRune; r++ {
			if got, want := refused.MatchString(string(r)), imports.RefusedInTarget(r); got != want {
				t.Errorf("%s %q: the document refuses it: %v, the server: %v", name, r, got, want)
			}
		}
	}
	// The abstract's "not blank" is papersearch.Blank's, exactly, and a
	// query's is the same (search.ValidateText refuses a blank one).
	for name, pattern := range map[string]string{
		"map q":        doc.Paths.Find("/v1/map").Get.Parameters.GetByInAndName("query", "q").Schema.Value.Pattern,
		"search query": schema("SearchRequest").AnyOf[0].Value.Properties["query"].Value.Pattern,
		"alert query":  schema("AlertRequest").OneOf[0].Value.Properties["query"].Value.Pattern,
	} {
		eq(name+" pattern", pattern, prop("PaperInput", "abstract").Pattern)
	}
	for _, name := range []string{"PaperInput", "PaperPatch"} {
		nonBlank := regexp.MustCompile(prop(name, "abstract").Pattern)
		for r := rune(0); r <= unicode.MaxRune; r++ {
			if got, want := nonBlank.MatchString(string(r)), !papersearch.Blank(string(r)); got != want {
				t.Errorf("%s abstract %q: the document says blank: %v, the server: %v", name, r, !got, !want)
			}
		}
	}
}

// TestOpenAPISaysWhoMayWrite: the served document requires the bearer
// key of the write operations exactly when the service does: a keyed
// service and one that refuses writes state it, a keyless loopback one
// (which takes writes without a key) states none.
func TestOpenAPISaysWhoMayWrite(t *testing.T) {
	server(t)
	for _, tt := range []struct {
		name string
		opts Options
		want bool
	}{
		{"keyed", Options{APIKey: "k"}, true},
		{"writes refused", Options{}, true},
		{"keyless loopback", Options{OpenWrites: true}, false},
	} {
		srv := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), tt.opts))
		_, body := do(t, "GET", srv.URL+"/openapi.json", "", "")
		srv.Close()
		var doc struct {
			Paths map[string]map[string]json.RawMessage `json:"paths"`
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatal(err)
		}
		for path, method := range map[string]string{"/v1/papers": "post", "/v1/alerts": "post", "/v1/watches/{id}/run": "post", "/v1/imports/{id}/cancel": "post"} {
			var op struct {
				Security []map[string][]string `json:"security"`
			}
			if err := json.Unmarshal(doc.Paths[path][method], &op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			got := len(op.Security) > 0
			if got != tt.want {
				t.Errorf("%s: %s %s states security %v, want %v", tt.name, method, path, got, tt.want)
			}
		}
	}
}

// TestSourcesAreOneList: the import sources the OpenAPI document's enums,
// the MCP import tool's description and the command line's help name are
// the list catalog/imports keeps; a source added there and missed in one of
// them fails here.
func TestSourcesAreOneList(t *testing.T) {
	url, _ := server(t)
	raw, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	type source struct {
		Enum  []string `json:"enum"`
		Const string   `json:"const"`
	}
	type props struct {
		Properties struct {
			Source source `json:"source"`
		} `json:"properties"`
	}
	var doc struct {
		Components struct {
			Schemas struct {
				ImportRequest struct {
					OneOf []props `json:"oneOf"`
				}
				WatchRequest struct {
					props
					Not props `json:"not"`
				}
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	sorted := func(s ...[]string) string {
		all := slices.Concat(s...)
		slices.Sort(all)
		return strings.Join(all, ",")
	}
	sc := doc.Components.Schemas
	if len(sc.ImportRequest.OneOf) != 2 {
		t.Fatalf("ImportRequest: %d alternatives, want the network and the file sources'", len(sc.ImportRequest.OneOf))
	}
	for _, tt := range []struct {
		what      string
		got, want string
	}{
		{"ImportRequest's network sources", sorted(sc.ImportRequest.OneOf[0].Properties.Source.Enum), sorted(imports.NetworkSources())},
		{"ImportRequest's file sources", sorted(sc.ImportRequest.OneOf[1].Properties.Source.Enum), sorted(imports.UploadSources())},
		{"the sources POST /v1/imports takes", sorted(imports.NetworkSources(), imports.UploadSources()), sorted(imports.HTTPSources())},
		{"WatchRequest's sources", sorted(sc.WatchRequest.Properties.Source.Enum), sorted(imports.WatchSources())},
		{"WatchRequest's sources read in order (no since)", sc.WatchRequest.Not.Properties.Source.Const, sorted(imports.InOrder())},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: the document says %s, catalog/imports %s", tt.what, tt.got, tt.want)
		}
	}
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "papersearch-test", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools.Tools, func(tool *mcp.Tool) bool { return tool.Name == "import" })
	if i < 0 {
		t.Fatal("no import tool")
	}
	for _, s := range imports.HTTPSources() {
		if !strings.Contains(tools.Tools[i].Description, s) {
			t.Errorf("the MCP import tool's description names no %s: %q", s, tools.Tools[i].Description)
		}
	}
}

// TestOpenAPILinksResolve checks every link of the document, the
// routes a stateful client (schemathesis) follows from one response to the
// next request: it names an operation the document has, only parameters
// that operation takes, each from a path parameter of the request it
// follows or a single value (not an array) of the response's schema. A
// link that names nothing sends clients to a wrong URL, and without one a
// stateful client infers its own (schemathesis put a whole array of ids
// in a path).
func TestOpenAPILinksResolve(t *testing.T) {
	url, _ := server(t)
	doc := servedOpenAPI(t, url)
	type op struct {
		*openapi3.Operation
		params openapi3.Parameters // the path item's and the operation's
	}
	ops := map[string]op{}
	for _, item := range doc.Paths.Map() {
		for _, o := range item.Operations() {
			ops[o.OperationID] = op{o, append(slices.Clone(item.Parameters), o.Parameters...)}
		}
	}
	links := 0
	for _, from := range ops {
		for code, resp := range from.Responses.Map() {
			for name, ref := range resp.Value.Links {
				links++
				where := fmt.Sprintf("%s %s link %s", from.OperationID, code, name)
				to, ok := ops[ref.Value.OperationID]
				if !ok {
					t.Errorf("%s: no operation %q", where, ref.Value.OperationID)
					continue
				}
				for param, expr := range ref.Value.Parameters {
					if to.params.GetByInAndName("path", param) == nil && to.params.GetByInAndName("query", param) == nil {
						t.Errorf("%s: %s takes no parameter %q", where, to.OperationID, param)
					}
					s, _ := expr.(string)
					switch {
					case strings.HasPrefix(s, "$request.path."):
						if from.params.GetByInAndName("path", strings.TrimPrefix(s, "$request.path.")) == nil {
							t.Errorf("%s: %s has no path parameter for %q", where, from.OperationID, s)
						}
					case strings.HasPrefix(s, "$response.body#/"):
						if err := scalarAt(resp.Value.Content.Get("application/json").Schema, strings.TrimPrefix(s, "$response.body#/")); err != nil {
							t.Errorf("%s: %s: %v", where, s, err)
						}
					default:
						t.Errorf("%s: parameter %q from %q, neither a path parameter nor a response member", where, param, s)
					}
				}
			}
		}
	}
	if links < 10 {
		t.Fatalf("only %d links in the document", links)
	}
}

// scalarAt finds the schema at a JSON pointer (an array's items by index)
// and says whether it is a single value: a string, number or boolean.
func scalarAt(ref *openapi3.SchemaRef, pointer string) error {
	for _, step := range strings.Split(pointer, "/") {
		if ref == nil || ref.Value == nil {
			return fmt.Errorf("no schema before %q", step)
		}
		s := ref.Value
		switch {
		case s.Type.Is("array"):
			if strings.Trim(step, "0123456789") != "" {
				return fmt.Errorf("%q is no index of an array", step)
			}
			ref = s.Items
		case s.Properties[step] != nil:
			ref = s.Properties[step]
		default:
			return fmt.Errorf("no member %q", step)
		}
	}
	if ref == nil || ref.Value == nil || ref.Value.Type.Is("array") || ref.Value.Type.Is("object") {
		return errors.New("not a single value")
	}
	return nil
}

// TestOpenAPITagPatterns: every tag the document takes is a paper's tag
// (TagPattern, up to a mark's length) or a collection's
// (CollectionTagPattern, MaxTagLength), and each pattern says what the
// server checks: a mark is a tag and no collection, the longest of each
// is taken and one more character is not.
func TestOpenAPITagPatterns(t *testing.T) {
	var doc any
	if err := json.Unmarshal(openAPITemplate, &doc); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if p, ok := v["pattern"].(string); ok && strings.Contains(p, "[A-Za-z0-9._-]") {
				max, _ := v["maxLength"].(float64)
				switch {
				case p == papersearch.TagPattern && int(max) == len(papersearch.NotInterestedTag(strings.Repeat("a", papersearch.MaxTagLength))):
					counts["tag"]++
				case p == papersearch.CollectionTagPattern && int(max) == papersearch.MaxTagLength:
					counts["collection"]++
				default:
					t.Errorf("%s: pattern %s, maxLength %v: neither a tag's nor a collection's", path, p, max)
				}
			}
			for k, e := range v {
				walk(path+"/"+k, e)
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s/%d", path, i), e)
			}
		}
	}
	walk("", doc)
	if counts["tag"] == 0 || counts["collection"] == 0 {
		t.Errorf("tags and collections in the document: %v", counts)
	}
	tag, collection := regexp.MustCompile(papersearch.TagPattern), regexp.MustCompile(papersearch.CollectionTagPattern)
	longest := strings.Repeat("a", papersearch.MaxTagLength)
	for s, want := range map[string][2]bool{ // tag, collection
		"reading": {true, true}, "Not.Reading": {true, false}, "note": {true, true}, "not": {true, true}, "n.o": {true, true},
		longest: {true, true}, "not." + longest: {true, false}, longest + "a": {false, false},
		"not.-x": {false, false}, "not.not.x": {false, false}, "not.": {false, false}, "-x": {false, false},
	} {
		if got := [2]bool{tag.MatchString(s), collection.MatchString(s)}; got != want {
			t.Errorf("%q: tag, collection %v, want %v", s, got, want)
		}
	}
}
