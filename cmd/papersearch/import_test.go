package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/seeds/arxiv"
	"github.com/papersearch/papersearch/seeds/fetch/fetchtest"
	"github.com/papersearch/papersearch/seeds/openalex"
	"github.com/papersearch/papersearch/seeds/openreview"
)

// TestImportCommand imports the BibTeX and CSL-JSON fixture libraries
// through the command: each paper gets the tags, records without an
// abstract are listed with their lines, a paper in both libraries keeps
// both tags, and similar within a tag keeps to it.
func TestImportCommand(t *testing.T) {
	setEnv(t)
	t.Setenv("PAPERSEARCH_LOG_LEVEL", "warn")
	// The smallest model: the test is about importing, and it opens the
	// store (and the model) once per command.
	t.Setenv("PAPERSEARCH_MODEL", "all-MiniLM-L6-v2")
	ctx := context.Background()
	bib, _ := filepath.Abs("../../seeds/bibtex/testdata/zotero.bib")
	cslFile, _ := filepath.Abs("../../seeds/csl/testdata/zotero.json")

	var out, errs bytes.Buffer
	if err := run(ctx, []string{"import", "bibtex", bib, "--tag", "my-library"}, &out, &errs); err != nil {
		t.Fatalf("%v\n%s", err, errs.String())
	}
	if !strings.Contains(out.String(), "6 records; 4 new, 0 updated, 0 unchanged; 0 merged with another version of their work; 2 rejected (1 without an abstract)") {
		t.Errorf("bibtex import summary: %s", out.String())
	}
	if !strings.Contains(errs.String(), "zotero.bib:29: rejected: entry noabstract2020: abstract is empty") {
		t.Errorf("rejections not listed by line:\n%s", errs.String())
	}
	out.Reset()
	if err := run(ctx, []string{"import", "csl", "--tag", "Reading-Group", cslFile}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	// Deep learning (doi:10.1038/nature14539 in CSL, an arXiv e-print in
	// BibTeX) and Attention (the arXiv preprint in CSL, a DOI in BibTeX)
	// join the BibTeX papers by title and first author; the blog post is new.
	if !strings.Contains(out.String(), "5 records; 1 new, 2 updated, 0 unchanged; 2 merged with another version of their work; 2 rejected (1 without an abstract)") {
		t.Errorf("csl import summary: %s", out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"import", "bibtex", bib, "--tag", "reading-group"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	// The two papers the CSL import merged hold reading-group already.
	if !strings.Contains(out.String(), "0 new, 2 updated, 2 unchanged") || !strings.Contains(out.String(), "0 embedded") {
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
	if !strings.Contains(out.String(), "3 records; 1 new, 1 updated, 0 unchanged; 0 merged with another version of their work; 1 rejected (0 without an abstract)") {
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
	sourceFixtures(t)
	out.Reset()
	errs.Reset()
	if err := run(ctx, []string{"import", "openreview", "ICLR.cc/2026/Conference"}, &out, &errs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "8 records; 7 new, 0 updated, 0 unchanged; 0 merged with another version of their work; 1 rejected (1 without an abstract)") ||
		!strings.Contains(errs.String(), "ICLR.cc/2026/Conference:8: rejected: OpenReview note note0007: abstract is empty") ||
		!strings.Contains(errs.String(), "[iclr-2026]") {
		t.Errorf("openreview import: %s\n%s", out.String(), errs.String())
	}

	out.Reset()
	if err := run(ctx, []string{"import", "arxiv", "cat:cs.LG AND ti:diffusion", "--max", "5", "--tag", "diffusion"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "1 records; 1 new") {
		t.Errorf("arxiv import: %s", out.String())
	}

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

// sourceFixtures serves a fake of each network source (fetchtest) and
// points the service at them: OpenReview has eight notes for
// ICLR.cc/2026/Conference (note 7 without an abstract), arXiv one entry
// for cat:cs.LG AND ti:diffusion, OpenAlex one work for
// publication_year:2026 (and insists on the polite pool's e-mail).
func sourceFixtures(t *testing.T) {
	t.Helper()
	t.Setenv("PAPERSEARCH_OPENREVIEW_URL", fetchtest.OpenReview(t, "ICLR.cc/2026/Conference", 8, openreview.PageSize).URL)
	t.Setenv("PAPERSEARCH_ARXIV_URL", fetchtest.ArXiv(t, "cat:cs.LG AND ti:diffusion", 1, arxiv.APIPageSize).URL)
	t.Setenv("PAPERSEARCH_OPENALEX_URL", fetchtest.OpenAlex(t, "publication_year:2026", "me@example.org", 1, openalex.PageSize).URL)
	t.Setenv("PAPERSEARCH_OPENALEX_EMAIL", "me@example.org")
}

// TestServeImportsEverySource: through the running service, each source
// imports over POST /v1/imports and its job ends done with what it
// stored, the papers found under the source's tag.
func TestServeImportsEverySource(t *testing.T) {
	setEnv(t)
	t.Setenv("PAPERSEARCH_SEED", "false")
	t.Setenv("PAPERSEARCH_MODEL", "all-MiniLM-L6-v2")
	sourceFixtures(t)
	url, logs, stop := startServe(t)
	defer stop()
	bib, _ := os.ReadFile("../../seeds/bibtex/testdata/zotero.bib")
	cslFile, _ := os.ReadFile("../../seeds/csl/testdata/zotero.json")
	for _, tc := range []struct {
		req    wire.ImportRequest
		stored int
		tag    string
	}{
		{wire.ImportRequest{Source: "openreview", Target: "ICLR.cc/2026/Conference"}, 7, "iclr-2026"},
		{wire.ImportRequest{Source: "arxiv", Target: "cat:cs.LG AND ti:diffusion"}, 1, "arxiv"},
		{wire.ImportRequest{Source: "openalex", Target: "publication_year:2026"}, 1, "openalex"},
		{wire.ImportRequest{Source: "bibtex", Content: string(bib), Tags: []string{"library"}}, 4, "library"},
		{wire.ImportRequest{Source: "csl", Content: string(cslFile), Tags: []string{"zotero"}}, 3, "zotero"},
	} {
		body, _ := json.Marshal(tc.req)
		resp, err := http.Post(url+"/v1/imports", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var job wire.ImportJob
		json.NewDecoder(resp.Body).Decode(&job)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("%s: %d %+v", tc.req.Source, resp.StatusCode, job)
		}
		for deadline := time.Now().Add(time.Minute); job.Status == "running" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			resp, err := http.Get(url + "/v1/imports/" + job.ID)
			if err != nil {
				t.Fatal(err)
			}
			json.NewDecoder(resp.Body).Decode(&job)
			resp.Body.Close()
		}
		if job.Status != "done" || job.Stored != tc.stored {
			t.Errorf("%s: %+v\n%s", tc.req.Source, job, logs)
		}
		sim := fmt.Sprintf(`{"query":"experts diffusion routing learning","limit":50,"filters":{"tags":[%q]}}`, tc.tag)
		resp, err = http.Post(url+"/v1/search", "application/json", strings.NewReader(sim))
		if err != nil {
			t.Fatal(err)
		}
		var res wire.SearchResponse
		json.NewDecoder(resp.Body).Decode(&res)
		resp.Body.Close()
		if len(res.Results) < tc.stored {
			t.Errorf("%s: %d papers under the tag %s, want at least %d", tc.req.Source, len(res.Results), tc.tag, tc.stored)
		}
	}
}

// TestImportResumesWithoutRefetching: an OpenReview import interrupted in
// its second page, run again, asks only for the notes after its last
// stored batch, stores the rest, and forgets its checkpoint once done;
// --restart reads from the start.
func TestImportResumesWithoutRefetching(t *testing.T) {
	dir := setEnv(t)
	t.Setenv("PAPERSEARCH_LOG_LEVEL", "warn")
	t.Setenv("PAPERSEARCH_MODEL", "all-MiniLM-L6-v2")
	const venue = "TMLR.cc/2026/Journal"
	up := fetchtest.OpenReview(t, venue, 1200, openreview.PageSize) // notes 7 and 11 rejected
	t.Setenv("PAPERSEARCH_OPENREVIEW_URL", up.URL)
	var (
		mu   sync.Mutex
		stop context.CancelFunc // the running import's, cancelled at the second page
	)
	up.Before(func(r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if offset, _ := strconv.Atoi(r.URL.Query().Get("offset")); offset >= 1000 && stop != nil {
			stop() // interrupted while the second page is fetched
			stop = nil
		}
	})
	asked := func() []string {
		var out []string
		for _, q := range up.Asked() {
			out = append(out, q.Get("offset"))
		}
		return out
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mu.Lock()
	stop = cancel
	mu.Unlock()
	var said bytes.Buffer
	if err := run(ctx, []string{"import", "openreview", venue}, io.Discard, &said); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted import: %v", err)
	}
	// It says what it stored, which stays.
	if !strings.Contains(said.String(), "interrupted; what was stored stays, and the same command again goes on from it: ") || !strings.Contains(said.String(), "; 768 new,") {
		t.Errorf("the interrupted import said:\n%s", said.String())
	}
	// Three batches of 256 papers were stored before the interruption: 770
	// records with the two rejected.
	if got := asked(); !slices.Equal(got, []string{"0", "1000"}) {
		t.Errorf("first run asked for offsets %v", got)
	}
	var out, errs bytes.Buffer
	if err := run(context.Background(), []string{"import", "openreview", venue}, &out, &errs); err != nil {
		t.Fatalf("%v\n%s", err, errs.String())
	}
	if got := asked(); !slices.Equal(got, []string{"770"}) {
		t.Errorf("the resumed run asked for offsets %v, want only 770", got)
	}
	if !strings.Contains(errs.String(), "resuming after record 770") || !strings.Contains(out.String(), "430 records; 430 new, 0 updated, 0 unchanged") {
		t.Errorf("resumed import:\n%s%s", errs.String(), out.String())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "imports", "*")); len(left) != 0 {
		t.Errorf("checkpoints left after a finished import: %v", left)
	}
	out.Reset()
	if err := run(context.Background(), []string{"import", "openreview", venue, "--restart"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := asked(); !slices.Equal(got, []string{"0", "1000"}) || !strings.Contains(out.String(), "1200 records; 0 new, 0 updated, 1198 unchanged") {
		t.Errorf("--restart asked for %v: %s", got, out.String())
	}
}
