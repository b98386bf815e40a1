package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportCommand imports the BibTeX and CSL-JSON fixture libraries
// through the command: each paper gets the tags, records without an
// abstract are listed with their lines, a paper in both libraries keeps
// both tags, and similar within a tag keeps to it.
func TestImportCommand(t *testing.T) {
	setEnv(t)
	t.Setenv("PAPERSEARCH_LOG_LEVEL", "warn")
	ctx := context.Background()
	bib, _ := filepath.Abs("../../seeds/bibtex/testdata/zotero.bib")
	cslFile, _ := filepath.Abs("../../seeds/csl/testdata/zotero.json")

	var out, errs bytes.Buffer
	if err := run(ctx, []string{"import", "bibtex", bib, "--tag", "my-library"}, &out, &errs); err != nil {
		t.Fatalf("%v\n%s", err, errs.String())
	}
	if !strings.Contains(out.String(), "6 records; 4 new, 0 updated, 0 unchanged; 2 rejected (1 without an abstract)") {
		t.Errorf("bibtex import summary: %s", out.String())
	}
	if !strings.Contains(errs.String(), "zotero.bib:29: rejected: entry noabstract2020: abstract is empty") {
		t.Errorf("rejections not listed by line:\n%s", errs.String())
	}
	out.Reset()
	if err := run(ctx, []string{"import", "csl", "--tag", "Reading-Group", cslFile}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	// Deep learning (doi:10.1038/nature14539 in CSL, arxiv: in BibTeX) is
	// two papers until cross-source matching lands; attention is new too.
	if !strings.Contains(out.String(), "5 records; 3 new, 0 updated, 0 unchanged; 2 rejected (1 without an abstract)") {
		t.Errorf("csl import summary: %s", out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"import", "bibtex", bib, "--tag", "reading-group"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "0 new, 4 updated, 0 unchanged") || !strings.Contains(out.String(), "0 embedded") {
		t.Errorf("re-import with a second tag: %s", out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"similar", "--json", "doi:10.1038/nature14539"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"my-library"`) || !strings.Contains(out.String(), `"reading-group"`) {
		t.Errorf("similar shows no tags:\n%s", out.String())
	}
	snapshot, _ := filepath.Abs("../../seeds/arxiv/testdata/snapshot.jsonl")
	out.Reset()
	if err := run(ctx, []string{"import", "arxiv-snapshot", snapshot, "--category", "cs.LG", "--category", "cs.AI"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	// 2401.01234 is also in the BibTeX fixture: the same id, so an update.
	if !strings.Contains(out.String(), "3 records; 1 new, 1 updated, 0 unchanged; 1 rejected (0 without an abstract)") {
		t.Errorf("arxiv-snapshot import summary: %s", out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"search", "--json", "old-style identifiers carry the year"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Results []struct {
			ID    string
			Paper struct{ Tags []string }
		}
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || len(res.Results) == 0 ||
		res.Results[0].ID != "arxiv:cs/9901001" || strings.Join(res.Results[0].Paper.Tags, ",") != "arxiv" {
		t.Errorf("search after the arXiv import (%v): %+v", err, res.Results)
	}
	// OpenReview, through an httptest server answering as its API v2 does.
	or := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("content.venueid") != "ICLR.cc/2026/Conference" || r.URL.Query().Get("offset") != "0" {
			io.WriteString(w, `{"notes":[],"count":2}`)
			return
		}
		io.WriteString(w, `{"count":2,"notes":[
			{"id":"or1","forum":"or1","content":{"title":{"value":"Sparse experts"},"abstract":{"value":"Routing tokens to experts."},"authors":{"value":["A. B."]}}},
			{"id":"or2","forum":"or2","content":{"title":{"value":"No abstract"},"authors":{"value":["C. D."]}}}]}`)
	}))
	defer or.Close()
	t.Setenv("PAPERSEARCH_OPENREVIEW_URL", or.URL)
	out.Reset()
	errs.Reset()
	if err := run(ctx, []string{"import", "openreview", "ICLR.cc/2026/Conference"}, &out, &errs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "2 records; 1 new, 0 updated, 0 unchanged; 1 rejected (1 without an abstract)") ||
		!strings.Contains(errs.String(), "ICLR.cc/2026/Conference:2: rejected: OpenReview note or2: abstract is empty") ||
		!strings.Contains(errs.String(), "[iclr-2026]") {
		t.Errorf("openreview import: %s\n%s", out.String(), errs.String())
	}

	// arXiv's API, likewise.
	ax := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">
			<opensearch:totalResults>1</opensearch:totalResults>
			<entry><id>http://arxiv.org/abs/2511.00042v1</id><published>2025-11-03T00:00:00Z</published>
			<title>Score-based diffusion</title><summary>Denoising score matching at scale.</summary>
			<author><name>E. F.</name></author></entry></feed>`)
	}))
	defer ax.Close()
	t.Setenv("PAPERSEARCH_ARXIV_URL", ax.URL)
	out.Reset()
	if err := run(ctx, []string{"import", "arxiv", "cat:cs.LG AND ti:diffusion", "--max", "5", "--tag", "diffusion"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "1 records; 1 new") {
		t.Errorf("arxiv import: %s", out.String())
	}

	// OpenAlex, likewise, with the polite pool's e-mail.
	oa := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("mailto") != "me@example.org" {
			http.Error(w, "no mailto", http.StatusForbidden)
			return
		}
		io.WriteString(w, `{"meta":{"count":1,"next_cursor":null},"results":[{"id":"https://openalex.org/W77",
			"doi":"https://doi.org/10.1/XYZ","title":"Inverted abstracts","publication_year":2026,
			"abstract_inverted_index":{"Words":[0],"in":[1],"order.":[2]},"authorships":[]}]}`)
	}))
	defer oa.Close()
	t.Setenv("PAPERSEARCH_OPENALEX_URL", oa.URL)
	t.Setenv("PAPERSEARCH_OPENALEX_EMAIL", "me@example.org")
	out.Reset()
	if err := run(ctx, []string{"import", "openalex", "publication_year:2026"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "1 records; 1 new") {
		t.Errorf("openalex import: %s", out.String())
	}

	for _, args := range [][]string{{"import", "arxiv", "q", "--max", "0"}, {"import"}, {"import", "bibtex", bib, "--category", "cs."}, {"import", "bibtex"}, {"import", "nope", bib}, {"import", "bibtex", "/no/such.bib"},
		{"import", "bibtex", bib, "--tag", "has space"}} {
		if err := run(ctx, args, io.Discard, io.Discard); err == nil {
			t.Errorf("papersearch %s succeeded", strings.Join(args, " "))
		}
	}
}
