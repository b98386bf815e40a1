package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search/storage"
)

// TestIngestValidation posts papers the service must refuse, each naming
// the paper and field at fault, and checks that nothing of a refused
// request is stored; and papers it must take, including null as absent.
func TestIngestValidation(t *testing.T) {
	server(t)
	srv := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{OpenWrites: true}))
	defer srv.Close()
	ok := `{"id":"v-ok","abstract":"A valid paper about validation."}`
	tests := []struct {
		name, body string
		pointer    string // "" means accepted
	}{
		{"year negative", `{"papers":[` + ok + `,{"id":"v1","abstract":"x","year":-1}]}`, "/papers/1/year"},
		{"year 10000", `{"papers":[{"id":"v1","abstract":"x","year":10000}]}`, "/papers/0/year"},
		{"year huge", `{"papers":[{"id":"v1","abstract":"x","year":99999999}]}`, "/papers/0/year"},
		{"year single object", `{"id":"v1","abstract":"x","year":-5}`, "/year"},
		{"year wrong type in batch", `{"papers":[` + ok + `,{"id":"v1","abstract":"x","year":"2020"}]}`, "/papers/1/year"},
		{"authors wrong type in batch", `{"papers":[` + ok + `,` + ok + `,{"abstract":"x","authors":"A"}]}`, "/papers/2/authors"},
		{"unknown field in batch", `{"papers":[` + ok + `,{"abstract":"x","doi":"10.1/x"}]}`, "/papers/1/doi"},
		{"unknown null field in a paper", `{"papers":[{"id":"v1","abstract":"x","doi":null}]}`, "/papers/0/doi"},
		{"unknown null field beside papers", `{"colour":null,"papers":[{"id":"v1","abstract":"x"}]}`, "/colour"},
		{"javascript url", `{"papers":[{"id":"v1","abstract":"x","url":"javascript:alert(document.domain)"}]}`, "/papers/0/url"},
		{"javascript url, mixed case", `{"papers":[{"id":"v1","abstract":"x","url":" JavaScript:alert(1)"}]}`, "/papers/0/url"},
		{"data url", `{"papers":[{"id":"v1","abstract":"x","url":"data:text/html,<script>alert(1)</script>"}]}`, "/papers/0/url"},
		{"relative url", `{"papers":[{"id":"v1","abstract":"x","url":"/papers/1"}]}`, "/papers/0/url"},
		{"scheme-relative url", `{"papers":[{"id":"v1","abstract":"x","url":"//evil.example/x"}]}`, "/papers/0/url"},
		{"ftp url", `{"papers":[{"id":"v1","abstract":"x","url":"ftp://example.org/p.pdf"}]}`, "/papers/0/url"},
		{"url without host", `{"papers":[{"id":"v1","abstract":"x","url":"http://"}]}`, "/papers/0/url"},
		{"url with a tab", `{"papers":[{"id":"v1","abstract":"x","url":"java\tscript:alert(1)"}]}`, "/papers/0/url"},
		{"blank abstract", `{"papers":[{"id":"v1","abstract":" \n "}]}`, "/papers/0/abstract"},
		{"id too long", `{"papers":[{"id":"` + strings.Repeat("é", 201) + `","abstract":"x"}]}`, "/papers/0/id"},
		{"abstract too long", `{"papers":[` + ok + `,{"id":"v1","abstract":"` + strings.Repeat("a", papersearch.MaxAbstractLength+1) + `"}]}`, "/papers/1/abstract"},
		{"title too long", `{"papers":[{"id":"v1","abstract":"x","title":"` + strings.Repeat("é", papersearch.MaxTitleLength+1) + `"}]}`, "/papers/0/title"},
		{"author too long", `{"papers":[{"id":"v1","abstract":"x","authors":["` + strings.Repeat("a", papersearch.MaxAuthorLength+1) + `"]}]}`, "/papers/0/authors"},
		{"duplicate key", `{"papers":[{"id":"v1","abstract":"x","year":2000,"year":2001}]}`, "/papers/0/year"},
		{"https url and edge years", `{"papers":[{"id":"v-a","abstract":"Edge years.","year":9999,"url":"https://arxiv.org/abs/1706.03762"},{"id":"v-b","abstract":"Year zero is unknown.","year":0,"url":"http://example.org/p?a=1#x"}]}`, ""},
		{"id of 200 two-byte characters", `{"id":"` + strings.Repeat("é", 200) + `","abstract":"A long id."}`, ""},
		{"null as absent", `{"papers":[{"id":"v-n","title":null,"abstract":"Nulls are absent.","authors":null,"venue":null,"year":null,"url":null}]}`, ""},
		{"null in an array", `{"papers":[{"id":"v1","abstract":"Null names.","authors":["A. Author",null]}]}`, "/papers/0/authors/1"},
		{"unknown type", `{"papers":[` + ok + `,{"id":"v1","abstract":"x","type":"journal"}]}`, "/papers/1/type"},
		{"type of the wrong kind", `{"papers":[{"id":"v1","abstract":"x","type":3}]}`, "/papers/0/type"},
		{"every type", `{"papers":[{"id":"v-t1","abstract":"A journal paper.","type":"journal-article"},{"id":"v-t2","abstract":"A preprint.","type":"preprint"},{"id":"v-t3","abstract":"Unknown.","type":null},{"id":"v-t4","abstract":"Unknown too.","type":""}]}`, ""},
		{"whole-number float year", `{"papers":[{"id":"v-f","abstract":"Float year.","year":2020.0}]}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := do(t, "POST", srv.URL+"/v1/papers", "application/json", tt.body)
			if tt.pointer == "" {
				if resp.StatusCode != 200 {
					t.Fatalf("status %d, want 200: %s", resp.StatusCode, body)
				}
				var ir wire.IngestResponse
				json.Unmarshal(body, &ir)
				for _, id := range ir.IDs {
					p, err := testServer.engine.Get(context.Background(), id)
					if err != nil {
						t.Errorf("%s not stored: %v", id, err)
					}
					if p.URL != "" && !strings.HasPrefix(p.URL, "http") {
						t.Errorf("stored url %q", p.URL)
					}
					catalog.New(testServer.engine, catalog.Options{}).Delete(context.Background(), id)
				}
				return
			}
			if resp.StatusCode != 400 {
				t.Fatalf("status %d, want 400: %s", resp.StatusCode, body)
			}
			var p wire.Problem
			if err := json.Unmarshal(body, &p); err != nil || len(p.Errors) == 0 || p.Errors[0].Pointer != tt.pointer {
				t.Errorf("errors %+v, want one at %s: %s", p.Errors, tt.pointer, body)
			}
			for _, id := range []string{"v1", "v-ok"} {
				if _, err := testServer.engine.Get(context.Background(), id); !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("%s of a refused request is stored: %v", id, err)
				}
			}
		})
	}
}

// TestIngestAThousandRealAbstracts posts 1,000 real paper records in one
// request, the documented maximum: their body is over the 1 MiB general
// limit and within the batch endpoints' limit, and every paper arrives.
func TestIngestAThousandRealAbstracts(t *testing.T) {
	req := wire.IngestRequest{Papers: testenv.MLPapers(t, MaxIngestPapers)}
	body, _ := json.Marshal(req)
	if len(body) <= DefaultMaxBody {
		t.Fatalf("1,000 papers take only %d bytes; the test proves nothing", len(body))
	}
	srv := httptest.NewServer(New(echoEngine{}, echoEngine{}, Options{OpenWrites: true}))
	defer srv.Close()
	resp, out := do(t, "POST", srv.URL+"/v1/papers", "application/json", string(body))
	var ir wire.IngestResponse
	if err := json.Unmarshal(out, &ir); resp.StatusCode != 200 || err != nil || ir.New != MaxIngestPapers || len(ir.IDs) != MaxIngestPapers {
		t.Fatalf("1,000 papers (%d bytes): %d %.300s", len(body), resp.StatusCode, out)
	}
	t.Logf("1,000 real papers in %d bytes (%.2f MiB) stored in one request", len(body), float64(len(body))/(1<<20))
	// One more paper is refused, naming the limit.
	req.Papers = append(req.Papers, req.Papers[0])
	body, _ = json.Marshal(req)
	if resp, out := do(t, "POST", srv.URL+"/v1/papers", "application/json", string(body)); resp.StatusCode != 400 || !strings.Contains(string(out), "1 to 1000") {
		t.Errorf("1,001 papers: %d %.300s", resp.StatusCode, out)
	}
}

// TestIDsWithPercentSignsRoundTrip stores ids holding "%", "/" and
// non-ASCII characters and reads each back through its escaped path: the
// id is unescaped exactly once.
func TestIDsWithPercentSignsRoundTrip(t *testing.T) {
	server(t)
	srv := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{OpenWrites: true}))
	defer srv.Close()
	ids := []string{"a%41b", "100%", "x/y%2Fz", "Ⱥÿ°m%ë", "50% off"}
	var papers []string
	for _, id := range ids {
		b, _ := json.Marshal(map[string]string{"id": id, "abstract": "A paper whose id is " + id + "."})
		papers = append(papers, string(b))
	}
	if resp, body := do(t, "POST", srv.URL+"/v1/papers", "application/json", `{"papers":[`+strings.Join(papers, ",")+`]}`); resp.StatusCode != 200 {
		t.Fatalf("ingest: %d %s", resp.StatusCode, body)
	}
	for _, id := range ids {
		resp, body := do(t, "GET", srv.URL+"/v1/papers/"+url.PathEscape(id), "", "")
		var p struct{ ID string }
		if json.Unmarshal(body, &p); resp.StatusCode != 200 || p.ID != id {
			t.Errorf("GET %q: %d %s", id, resp.StatusCode, body)
		}
		if resp, body := do(t, "DELETE", srv.URL+"/v1/papers/"+url.PathEscape(id), "", ""); resp.StatusCode != 204 {
			t.Errorf("DELETE %q: %d %s", id, resp.StatusCode, body)
		}
	}
}

// TestTags: papers carry tags in, out and through the filters of search
// and similar (any of a list, case-insensitive); a malformed tag is a 400
// naming the field.
func TestTags(t *testing.T) {
	server(t)
	srv := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{OpenWrites: true}))
	defer srv.Close()
	body := `{"papers":[
		{"id":"tag-a","abstract":"Sparse mixtures of experts route each token to two experts.","tags":["My-Library","neurips-2026"]},
		{"id":"tag-b","abstract":"Routing tokens to experts with load balancing losses.","tags":["my-library"]},
		{"id":"tag-c","abstract":"Expert routing for mixture-of-experts language models.","tags":["other"]}]}`
	if resp, b := do(t, "POST", srv.URL+"/v1/papers", "application/json", body); resp.StatusCode != 200 {
		t.Fatalf("ingest: %d %s", resp.StatusCode, b)
	}
	defer func() {
		for _, id := range []string{"tag-a", "tag-b", "tag-c"} {
			do(t, "DELETE", srv.URL+"/v1/papers/"+id, "", "")
		}
	}()
	ids := func(b []byte) string {
		var r wire.SearchResponse
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		var out []string
		for _, h := range r.Results {
			out = append(out, h.ID)
		}
		slices.Sort(out)
		return strings.Join(out, ",")
	}
	if _, b := do(t, "GET", srv.URL+"/v1/papers/tag-a", "", ""); !strings.Contains(string(b), `"tags":["my-library","neurips-2026"]`) {
		t.Errorf("GET tag-a: %s", b)
	}
	resp, b := do(t, "POST", srv.URL+"/v1/search", "application/json", `{"query":"mixture of experts routing","filters":{"tags":["MY-LIBRARY"]}}`)
	if resp.StatusCode != 200 || ids(b) != "tag-a,tag-b" {
		t.Errorf("search within my-library: %d %s", resp.StatusCode, ids(b))
	}
	resp, b = do(t, "GET", srv.URL+"/v1/papers/tag-a/similar?tag=other&tag=neurips-2026", "", "")
	if resp.StatusCode != 200 || ids(b) != "tag-c" {
		t.Errorf("similar to tag-a within other or neurips-2026: %d %s", resp.StatusCode, ids(b))
	}
	resp, b = do(t, "POST", srv.URL+"/v1/papers", "application/json", `{"id":"tag-d","abstract":"x","tags":["has space"]}`)
	if resp.StatusCode != 400 || !strings.Contains(string(b), `"/tags"`) {
		t.Errorf("a malformed tag: %d %s", resp.StatusCode, b)
	}
}

// TestPostMergesVersions: a published version POSTed under its DOI joins
// the preprint stored before it (the answer's ids name the work, GET by
// either id finds it), and a paper POSTed again under its own id replaces
// it whole.
func TestPostMergesVersions(t *testing.T) {
	server(t)
	srv := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{OpenWrites: true}))
	defer srv.Close()
	defer do(t, "DELETE", srv.URL+"/v1/papers/arxiv:2403.00009", "", "")
	preprint := `{"id":"arxiv:2403.00009","title":"Merging Versions of Papers Posted Twice","abstract":"A preprint on merging versions.",
		"authors":["Ada Lovelace"],"venue":"arXiv","year":2024,"tags":["versions"],"sources":[{"id":"arxiv:2403.00009"}]}`
	published := `{"papers":[{"id":"doi:10.9/merge","title":"Merging versions of papers posted twice","abstract":"On merging versions.",
		"authors":["Lovelace, Ada"],"venue":"ICML","year":2025}]}`
	var ir wire.IngestResponse
	for i, body := range []string{preprint, published} {
		resp, b := do(t, "POST", srv.URL+"/v1/papers", "application/json", body)
		if err := json.Unmarshal(b, &ir); resp.StatusCode != 200 || err != nil {
			t.Fatalf("POST %d: %d %s", i, resp.StatusCode, b)
		}
	}
	if ir.Merged != 1 || ir.Updated != 1 || !slices.Equal(ir.IDs, []string{"arxiv:2403.00009"}) {
		t.Errorf("the published version's answer: %+v; want it merged into arxiv:2403.00009", ir)
	}
	for _, id := range []string{"doi:10.9/merge", "arxiv:2403.00009"} {
		var p papersearch.Paper
		_, b := do(t, "GET", srv.URL+"/v1/papers/"+id, "", "")
		if err := json.Unmarshal(b, &p); err != nil || p.ID != "arxiv:2403.00009" || p.Venue != "ICML" || len(p.Sources) != 2 || !slices.Equal(p.Tags, []string{"versions"}) {
			t.Errorf("GET %s: %s", id, b)
		}
	}
	if _, b := do(t, "POST", srv.URL+"/v1/papers", "application/json",
		`{"id":"arxiv:2403.00009","title":"Merging Versions","abstract":"Replaced whole."}`); !strings.Contains(string(b), `"updated":1`) {
		t.Errorf("POST again under the work's id: %s", b)
	}
	var p papersearch.Paper
	_, b := do(t, "GET", srv.URL+"/v1/papers/arxiv:2403.00009", "", "")
	if err := json.Unmarshal(b, &p); err != nil || p.Abstract != "Replaced whole." || len(p.Tags) != 0 || p.Venue != "" {
		t.Errorf("after a POST under its id the paper is %s; want it replaced whole", b)
	}
}

// TestIDsWithSlashes: a DOI id is found by its raw path (slashes as they
// are), percent-encoded in either case, and in any letter case (DOIs are
// case-insensitive); so are its similar papers; DELETE takes it raw too.
func TestIDsWithSlashes(t *testing.T) {
	server(t)
	srv := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{OpenWrites: true}))
	defer srv.Close()
	const id = "doi:10.1109/jproc.2021.3058954"
	body := `{"papers":[{"id":"doi:10.1109/JPROC.2021.3058954","title":"A survey of slashes","abstract":"Identifiers with slashes in them, such as DOIs, name papers."}]}`
	if resp, b := do(t, "POST", srv.URL+"/v1/papers", "application/json", body); resp.StatusCode != 200 || !strings.Contains(string(b), `"ids":["`+id+`"]`) {
		t.Fatalf("POST: %d %s", resp.StatusCode, b)
	}
	for _, path := range []string{
		"/v1/papers/" + id,
		"/v1/papers/doi:10.1109/JPROC.2021.3058954",
		"/v1/papers/doi:10.1109%2Fjproc.2021.3058954",
		"/v1/papers/doi:10.1109%2fjproc.2021.3058954",
		"/v1/papers/DOI:10.1109%2FJPROC.2021.3058954",
	} {
		resp, b := do(t, "GET", srv.URL+path, "", "")
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"id":"`+id+`"`) {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		resp, b = do(t, "GET", srv.URL+path+"/similar?limit=2", "", "")
		if resp.StatusCode != 200 || strings.Contains(string(b), `"id":"`+id+`"`) {
			t.Errorf("GET %s/similar: %d %s", path, resp.StatusCode, b)
		}
	}
	// A paper's similar papers are only read, whatever the id's form.
	for _, path := range []string{"/v1/papers/doi:10.1109/JPROC.2021.3058954/similar", "/v1/papers/doi:10.1109%2Fjproc.2021.3058954/similar"} {
		for _, method := range []string{"DELETE", "PATCH"} {
			if resp, b := do(t, method, srv.URL+path, "application/json", `{"title":"x"}`); resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: %d (Allow %q) %s, want 405", method, path, resp.StatusCode, resp.Header.Get("Allow"), b)
			}
		}
	}
	if resp, b := do(t, "DELETE", srv.URL+"/v1/papers/"+id, "", ""); resp.StatusCode != 204 {
		t.Errorf("DELETE: %d %s", resp.StatusCode, b)
	}
	if resp, _ := do(t, "GET", srv.URL+"/v1/papers/"+id, "", ""); resp.StatusCode != 404 {
		t.Errorf("GET after DELETE: %d", resp.StatusCode)
	}
}

// TestPatchPaper: PATCH applies a JSON Merge Patch (RFC 7396) to the
// stored paper: the fields it names change, the others stay (POST
// replaces the paper whole), null removes a field; the result passes the
// rules a POST does; the id cannot change.
func TestPatchPaper(t *testing.T) {
	server(t)
	srv := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{OpenWrites: true}))
	defer srv.Close()
	defer do(t, "DELETE", srv.URL+"/v1/papers/patch-me", "", "")
	body := `{"id":"patch-me","title":"Before","abstract":"A paper about merge patches of stored records.","authors":["Ada Lovelace"],
		"venue":"ICML","year":2024,"url":"https://example.org/p","tags":["mine"]}`
	if resp, b := do(t, "POST", srv.URL+"/v1/papers", "application/json", body); resp.StatusCode != 200 {
		t.Fatalf("POST: %d %s", resp.StatusCode, b)
	}
	patch := func(body string) (*http.Response, papersearch.Paper, []byte) {
		t.Helper()
		resp, b := do(t, "PATCH", srv.URL+"/v1/papers/patch-me", "application/merge-patch+json", body)
		var p papersearch.Paper
		json.Unmarshal(b, &p)
		return resp, p, b
	}
	resp, p, b := patch(`{"title":"After"}`)
	if resp.StatusCode != 200 || p.Title != "After" || strings.Join(p.Authors, ",") != "Ada Lovelace" || p.Venue != "ICML" || p.Year != 2024 ||
		p.URL != "https://example.org/p" || strings.Join(p.Tags, ",") != "mine" {
		t.Errorf("PATCH title: %d %s", resp.StatusCode, b)
	}
	if got, _ := testServer.engine.Get(context.Background(), "patch-me"); got.Title != "After" || got.Venue != "ICML" {
		t.Errorf("stored after PATCH: %+v", got)
	}
	if resp, p, b := patch(`{"venue":null,"authors":["Ada Lovelace","Alan Turing"]}`); resp.StatusCode != 200 || p.Venue != "" || len(p.Authors) != 2 || p.Title != "After" {
		t.Errorf("PATCH venue null, authors: %d %s", resp.StatusCode, b)
	}
	for _, tc := range []struct {
		body    string
		status  int
		pointer string
	}{
		{`{"id":"another"}`, 409, "/id"},
		// Past the 1 MiB general limit, within a paper's: refused for what
		// it holds (more authors than a paper may have), not for its size.
		{`{"authors":["` + strings.Repeat(strings.Repeat("a", 250)+`","`, papersearch.MaxAuthors) + `b"]}`, 400, "/authors"},
		{`{"year":"2020"}`, 400, "/year"},
		{`{"abstract":"  "}`, 400, "/abstract"},
		{`{"colour":"red"}`, 400, "/colour"},
		{`["not","an","object"]`, 400, ""},
		{`{"title":"x","title":"y"}`, 400, "/title"},
		{`{"TITLE":"x"}`, 400, "/TITLE"}, // encoding/json would take it for title
		{`{"ADDED":"2001-01-01T00:00:00Z"}`, 400, "/ADDED"},
	} {
		resp, _, b := patch(tc.body)
		if resp.StatusCode != tc.status || tc.pointer != "" && !strings.Contains(string(b), `"pointer":"`+tc.pointer+`"`) {
			t.Errorf("PATCH %s: %d %s, want %d naming %q", tc.body, resp.StatusCode, b, tc.status, tc.pointer)
		}
	}
	if resp, b := do(t, "PATCH", srv.URL+"/v1/papers/no-such-paper", "application/merge-patch+json", `{"title":"x"}`); resp.StatusCode != 404 {
		t.Errorf("PATCH an unknown paper: %d %s", resp.StatusCode, b)
	}
	keyed := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{APIKey: "k"}))
	defer keyed.Close()
	if resp, _ := do(t, "PATCH", keyed.URL+"/v1/papers/patch-me", "application/merge-patch+json", `{"title":"x"}`); resp.StatusCode != 401 {
		t.Errorf("PATCH without the key: %d", resp.StatusCode)
	}
	if got, _ := testServer.engine.Get(context.Background(), "patch-me"); got.Title != "After" {
		t.Errorf("a refused PATCH changed the paper: %+v", got)
	}
}

// TestDates: a paper's date is stored and its added time set by the
// service (a request naming one, POST or PATCH, is refused); search and
// similar keep the papers within since and until, by publication or by
// when they were added; a bad bound names its field or parameter.
func TestDates(t *testing.T) {
	server(t)
	srv := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{OpenWrites: true}))
	defer srv.Close()
	before := time.Now().UTC().Truncate(time.Second)
	body := `{"papers":[
		{"id":"date-a","abstract":"Diffusion models for protein design, sampled with guidance.","date":"2026-03-14","tags":["dates"]},
		{"id":"date-b","abstract":"Diffusion models for molecule design, sampled with guidance.","date":"2025-11","tags":["dates"]},
		{"id":"date-c","abstract":"Diffusion models for crystal design, sampled with guidance.","year":2024,"tags":["dates"]}]}`
	if resp, b := do(t, "POST", srv.URL+"/v1/papers", "application/json", body); resp.StatusCode != 200 {
		t.Fatalf("ingest: %d %s", resp.StatusCode, b)
	}
	defer func() {
		for _, id := range []string{"date-a", "date-b", "date-c"} {
			do(t, "DELETE", srv.URL+"/v1/papers/"+id, "", "")
		}
	}()
	var p papersearch.Paper
	if _, b := do(t, "GET", srv.URL+"/v1/papers/date-b", "", ""); json.Unmarshal(b, &p) != nil || p.Date != "2025-11" || p.Year != 2025 ||
		p.Added.Before(before) || time.Since(p.Added) > time.Minute {
		t.Errorf("GET date-b: %s", b)
	}
	ids := func(b []byte) string {
		var r wire.SearchResponse
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		var out []string
		for _, h := range r.Results {
			out = append(out, h.ID)
		}
		slices.Sort(out)
		return strings.Join(out, ",")
	}
	for filters, want := range map[string]string{
		`{"tags":["dates"],"since":"2025-11-30"}`:                                       "date-a,date-b",
		`{"tags":["dates"],"since":"2025-12-01","until":"2026-12-31"}`:                  "date-a",
		`{"tags":["dates"],"until":"2024-06-30T23:00:00+02:00"}`:                        "date-c",
		`{"tags":["dates"],"by":"added","since":"` + before.Format(time.RFC3339) + `"}`: "date-a,date-b,date-c",
		`{"tags":["dates"],"by":"added","until":"2020-01-01"}`:                          "",
	} {
		resp, b := do(t, "POST", srv.URL+"/v1/search", "application/json", `{"query":"diffusion design","filters":`+filters+`}`)
		if resp.StatusCode != 200 || ids(b) != want {
			t.Errorf("search within %s: %d %s, want %s", filters, resp.StatusCode, ids(b), want)
		}
	}
	if resp, b := do(t, "GET", srv.URL+"/v1/papers/date-a/similar?tag=dates&since=2025-01-01&by=published", "", ""); resp.StatusCode != 200 || ids(b) != "date-b" {
		t.Errorf("similar since 2025: %d %s", resp.StatusCode, ids(b))
	}
	for _, tt := range []struct{ method, path, body, where string }{
		{"POST", "/v1/search", `{"query":"x","filters":{"since":"March 2026"}}`, `"/filters/since"`},
		{"POST", "/v1/search", `{"query":"x","filters":{"by":"posted"}}`, `"/filters/by"`},
		{"GET", "/v1/papers/date-a/similar?until=2026-02-30", "", `"until"`},
		{"GET", "/v1/papers/date-a/similar?by=", "", `"by"`},
		{"POST", "/v1/papers", `{"id":"date-d","abstract":"x","date":"2026-3-1"}`, `"/date"`},
		{"POST", "/v1/papers", `{"id":"date-d","abstract":"x","added":"2020-01-01T00:00:00Z"}`, `"/added"`},
		{"PATCH", "/v1/papers/date-a", `{"added":"2020-01-01T00:00:00Z"}`, `"/added"`},
		{"POST", "/v1/papers", `{"papers":[{"id":"date-d","abstract":"x","added":"2020-01-01T00:00:00Z"},{"id":"date-e","abstract":""}]}`,
			`"/papers/0/added"`},
		{"POST", "/v1/papers", `{"papers":[{"id":"date-d","abstract":"x","added":"2020-01-01T00:00:00Z"},{"id":"date-e","abstract":""}]}`,
			`"/papers/1/abstract"`},
	} {
		resp, b := do(t, tt.method, srv.URL+tt.path, "application/json", tt.body)
		if resp.StatusCode != 400 || !strings.Contains(string(b), tt.where) {
			t.Errorf("%s %s %s: %d %s; want 400 naming %s", tt.method, tt.path, tt.body, resp.StatusCode, b, tt.where)
		}
	}
	resp, b := do(t, "PATCH", srv.URL+"/v1/papers/date-a", "application/merge-patch+json", `{"date":"2026-03-15"}`)
	if json.Unmarshal(b, &p) != nil || resp.StatusCode != 200 || p.Date != "2026-03-15" || p.Added.Before(before) {
		t.Errorf("PATCH date: %d %s", resp.StatusCode, b)
	}
}
