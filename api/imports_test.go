package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/catalog/imports"
	"github.com/papersearch/papersearch/seeds"
	"github.com/papersearch/papersearch/seeds/bibtex"
	"github.com/papersearch/papersearch/seeds/csl"
)

// bibtexImporter opens bibtex imports with the real reader; other sources
// are not configured here.
func bibtexImporter(_ context.Context, req imports.Request) (imports.Opened, error) {
	if req.Kind != "bibtex" {
		return imports.Opened{}, &papersearch.FieldError{Field: "target",
			Err: fmt.Errorf("%w: %s is not configured in this test", imports.ErrBadRequest, req.Kind)}
	}
	tags, _ := papersearch.CleanTags(append(req.Tags, "from-bibtex"))
	return imports.Opened{Source: bibtex.NewReader(req.File), Tags: tags}, nil
}

// importServer is the shared test engine behind a server that imports;
// closing the Server waits for its imports.
func importServer(t *testing.T) (*httptest.Server, *Server) {
	t.Helper()
	server(t)
	h := New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{OpenWrites: true, Importer: bibtexImporter})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); h.Close() })
	return srv, h
}

const importLibrary = `@article{imp1, title = {Sparse experts at scale}, author = {Lovelace, Ada},
  abstract = {We route tokens to sparse experts.}, year = 2026}
@article{imp2, title = {No abstract}, author = {Doe, J.}}
@article{imp3, title = {Dense experts}, abstract = {Every expert sees every token.}, doi = {10.5/X}}
`

// waitImport polls an import until it is no longer running.
func waitImport(t *testing.T, base, id string) wire.ImportJob {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, body := do(t, "GET", base+"/v1/imports/"+id, "", "")
		var job wire.ImportJob
		if err := json.Unmarshal(body, &job); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET import: %d %s", resp.StatusCode, body)
		}
		if job.Status != "running" {
			return job
		}
	}
	t.Fatal("the import did not finish in a minute")
	return wire.ImportJob{}
}

// TestImportOverHTTP: POST /v1/imports answers 202 with a job at once;
// GET reports it done, with the records read, stored and rejected; the
// papers carry the request's tags and the source's; bad requests are 400
// naming the field.
func TestImportOverHTTP(t *testing.T) {
	srv, _ := importServer(t)
	body, _ := json.Marshal(wire.ImportRequest{Source: "bibtex", Content: importLibrary, Tags: []string{"HTTP-Import"}})
	resp, b := do(t, "POST", srv.URL+"/v1/imports", "application/json", string(body))
	var job wire.ImportJob
	if err := json.Unmarshal(b, &job); err != nil || resp.StatusCode != http.StatusAccepted || job.Status != "running" ||
		resp.Header.Get("Location") != "/v1/imports/"+job.ID || strings.Join(job.Tags, ",") != "from-bibtex,http-import" {
		t.Fatalf("start: %d %s", resp.StatusCode, b)
	}
	defer func() {
		for _, id := range []string{"bibtex:imp1", "doi:10.5/x"} {
			do(t, "DELETE", srv.URL+"/v1/papers/"+url.PathEscape(id), "", "")
		}
	}()
	done := waitImport(t, srv.URL, job.ID)
	if done.Status != "done" || done.Read != 3 || done.Stored != 2 || done.Embedded != 2 || done.Rejected != 1 || done.NoAbstract != 1 ||
		len(done.Rejections) != 1 || done.Rejections[0].Record != 3 || done.Summary == nil || done.Summary.New != 2 || done.FinishedAt == nil {
		t.Errorf("done: %+v", done)
	}
	if _, b := do(t, "GET", srv.URL+"/v1/papers/bibtex:imp1", "", ""); !strings.Contains(string(b), `"tags":["from-bibtex","http-import"]`) {
		t.Errorf("imported paper: %s", b)
	}
	for _, tc := range []struct{ body, pointer string }{
		{`{"source":"zotero","content":"x"}`, "/source"},
		{`{"source":"bibtex"}`, "/content"},
		{`{"source":"bibtex","content":"x","target":"y"}`, "/target"},
		{`{"source":"bibtex","content":"x","max":5}`, "/max"},
		{`{"source":"arxiv","content":"x","target":"q"}`, "/content"},
		{`{"source":"arxiv","target":"q","max":0}`, "/max"},
		{`{"source":"openalex"}`, "/target"},
		{`{"source":"bibtex","content":"x","tags":["no spaces"]}`, "/tags"},
		{`{"source":"arxiv","target":"q"}`, "/target"}, // not configured in this test: the importer refuses
		{`{"source":"bibtex","content":"x","tags":"one"}`, "/tags"},
	} {
		resp, b := do(t, "POST", srv.URL+"/v1/imports", "application/json", tc.body)
		if resp.StatusCode != 400 || !strings.Contains(string(b), `"pointer":"`+tc.pointer+`"`) {
			t.Errorf("%s: %d %s", tc.body, resp.StatusCode, b)
		}
	}
	if resp, _ := do(t, "GET", srv.URL+"/v1/imports/imp_nope", "", ""); resp.StatusCode != 404 {
		t.Errorf("unknown import: %d", resp.StatusCode)
	}
}

// TestImportOfAMacroBomb: eight nested @string macros, each ten copies of
// the last (553 bytes), once expanded to a 114 MiB abstract and killed the
// server. The entry is rejected and reported; the paper after it stored;
// the server goes on answering.
func TestImportOfAMacroBomb(t *testing.T) {
	srv, _ := importServer(t)
	var b strings.Builder
	b.WriteString("@string{m0 = \"lolololololol\"}\n")
	for i := 1; i < 8; i++ {
		fmt.Fprintf(&b, "@string{m%d = %s}\n", i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("m%d # ", i-1), 10), " # "))
	}
	b.WriteString("@article{bomb, title = {Bomb}, abstract = m7}\n")
	b.WriteString("@article{bomb-after, title = {After the bomb}, abstract = {A paper after the bomb is stored.}}\n")
	body, _ := json.Marshal(wire.ImportRequest{Source: "bibtex", Content: b.String()})
	resp, rb := do(t, "POST", srv.URL+"/v1/imports", "application/json", string(body))
	var job wire.ImportJob
	if err := json.Unmarshal(rb, &job); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("start: %d %s", resp.StatusCode, rb)
	}
	defer do(t, "DELETE", srv.URL+"/v1/papers/bibtex:bomb-after", "", "")
	done := waitImport(t, srv.URL, job.ID)
	if done.Status != "done" || done.Stored != 1 || done.Rejected != 1 || len(done.Rejections) != 1 ||
		!strings.Contains(done.Rejections[0].Detail, "bomb") || !strings.Contains(done.Rejections[0].Detail, "too long") {
		t.Errorf("done: %+v", done)
	}
	if resp, _ := do(t, "GET", srv.URL+"/v1/papers/bibtex:bomb-after", "", ""); resp.StatusCode != 200 {
		t.Errorf("the paper after the bomb: %d", resp.StatusCode)
	}
}

// failingSource fails at once with an error that holds what no client
// may see.
type failingSource struct{}

func (failingSource) Next() (papersearch.Paper, error) {
	return papersearch.Paper{}, errors.New("upstream answered 500: {\"token\":\"SECRET-TOKEN\"} from 10.1.2.3:6334 for mailto=ops@example.org")
}

// hugeRejections yields 100 records rejected with 150 KB reasons, then
// ends.
type hugeRejections struct{ n int }

func (h *hugeRejections) Next() (papersearch.Paper, error) {
	if h.n++; h.n > 100 {
		return papersearch.Paper{}, io.EOF
	}
	return papersearch.Paper{}, &seeds.LineError{Line: h.n, Err: fmt.Errorf("entry %s: %w", strings.Repeat("k", 150<<10), papersearch.ErrNoAbstract)}
}

// TestImportCancelKeyAndStatus: DELETE stops a running import (status
// cancelled, what it stored counted); GET and DELETE need the key as POST
// does; a failed import's status names no internals; a job's rejections
// are bounded in bytes.
func TestImportCancelKeyAndStatus(t *testing.T) {
	server(t)
	importer := func(_ context.Context, req imports.Request) (imports.Opened, error) {
		switch req.Target {
		case "fail":
			return imports.Opened{Source: failingSource{}}, nil
		case "rejections":
			return imports.Opened{Source: &hugeRejections{}}, nil
		}
		if req.Kind == "csl" {
			return imports.Opened{Source: csl.NewReader(req.File)}, nil
		}
		return bibtexImporter(context.Background(), req)
	}
	h := New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{APIKey: "k", Importer: importer})
	srv := httptest.NewServer(h)
	defer func() { srv.Close(); h.Close() }()
	start := func(body string) wire.ImportJob {
		t.Helper()
		resp, b := do(t, "POST", srv.URL+"/v1/imports", "application/json", body, "Authorization", "Bearer k")
		var job wire.ImportJob
		if err := json.Unmarshal(b, &job); err != nil || resp.StatusCode != http.StatusAccepted {
			t.Fatalf("start: %d %s", resp.StatusCode, b)
		}
		return job
	}
	status := func(id string) wire.ImportJob {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			resp, b := do(t, "GET", srv.URL+"/v1/imports/"+id, "", "", "Authorization", "Bearer k")
			var job wire.ImportJob
			if err := json.Unmarshal(b, &job); err != nil || resp.StatusCode != 200 {
				t.Fatalf("GET import: %d %s", resp.StatusCode, b)
			}
			if job.Status != "running" {
				return job
			}
		}
		t.Fatal("the import did not end")
		return wire.ImportJob{}
	}

	// Cancel: 300 entries take minutes to embed; DELETE stops the import.
	var lib strings.Builder
	for i := range 300 {
		fmt.Fprintf(&lib, "@misc{cancel%d, title = {Paper %d}, abstract = {A study of topic %d in machine learning, cancelled.}}\n", i, i, i)
	}
	body, _ := json.Marshal(wire.ImportRequest{Source: "bibtex", Content: lib.String()})
	job := start(string(body))
	if resp, b := do(t, "POST", srv.URL+"/v1/imports/"+job.ID+"/cancel", "", ""); resp.StatusCode != 401 {
		t.Errorf("cancel without the key: %d %s", resp.StatusCode, b)
	}
	if resp, b := do(t, "GET", srv.URL+"/v1/imports/"+job.ID, "", ""); resp.StatusCode != 401 {
		t.Errorf("GET without the key: %d %s", resp.StatusCode, b)
	}
	cancelStart := time.Now()
	resp, b := do(t, "POST", srv.URL+"/v1/imports/"+job.ID+"/cancel", "", "", "Authorization", "Bearer k")
	t.Logf("reliability: cancelling a running import answered %d in %v", resp.StatusCode, time.Since(cancelStart).Round(time.Millisecond))
	var cancelled wire.ImportJob
	if err := json.Unmarshal(b, &cancelled); err != nil || resp.StatusCode != 200 || cancelled.Status != "cancelled" || cancelled.FinishedAt == nil {
		t.Fatalf("cancel a running import: %d %s", resp.StatusCode, b)
	}
	// A cancelled import is not gone: it answers as it ended.
	if got := status(job.ID); got.Status != "cancelled" || got.Stored != cancelled.Stored {
		t.Errorf("GET a cancelled import: %+v", got)
	}
	stored := 0
	for i := range 300 {
		if _, err := testServer.engine.Get(context.Background(), fmt.Sprintf("bibtex:cancel%d", i)); err == nil {
			stored++
			defer catalog.New(testServer.engine, catalog.Options{}).Delete(context.Background(), fmt.Sprintf("bibtex:cancel%d", i))
		}
	}
	if stored != cancelled.Stored || stored == 300 {
		t.Errorf("the cancelled import says %d stored; the store holds %d of 300", cancelled.Stored, stored)
	}
	if resp, _ := do(t, "POST", srv.URL+"/v1/imports/"+job.ID+"/cancel", "", "", "Authorization", "Bearer k"); resp.StatusCode != 409 {
		t.Errorf("cancel an ended import: %d", resp.StatusCode)
	}
	// DELETE would say the import is gone; it is not, so it is no method here.
	if resp, b := do(t, "DELETE", srv.URL+"/v1/imports/"+job.ID, "", "", "Authorization", "Bearer k"); resp.StatusCode != 405 ||
		resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("DELETE an import: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}

	// A failure's status says what happened in words, not the error.
	job = start(`{"source":"openreview","target":"fail"}`)
	failed := status(job.ID)
	if failed.Status != "failed" || failed.Error == "" || strings.Contains(failed.Error, "SECRET") || strings.Contains(failed.Error, "10.1.2.3") ||
		strings.Contains(failed.Error, "ops@example.org") {
		t.Errorf("a failed import's status: %+v", failed)
	}

	// A file the client sent that cannot be read: the status says why.
	job = start(`{"source":"csl","content":"{\"id\": \"not a list\"}"}`)
	if failed := status(job.ID); failed.Status != "failed" || !strings.Contains(failed.Error, "not a JSON array") {
		t.Errorf("an import of a CSL file that is no array: %+v", failed)
	}

	// 100 rejections of 150 KB reasons: a small status.
	job = start(`{"source":"openreview","target":"rejections"}`)
	status(job.ID)
	resp, b = do(t, "GET", srv.URL+"/v1/imports/"+job.ID, "", "", "Authorization", "Bearer k")
	if resp.StatusCode != 200 || len(b) > 64<<10 {
		t.Errorf("status of 100 rejections with 150 KB reasons: %d, %d bytes", resp.StatusCode, len(b))
	}
}
