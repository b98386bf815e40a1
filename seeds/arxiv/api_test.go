package arxiv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
	"github.com/papersearch/papersearch/seeds/fetch"
)

const query = "cat:cs.LG AND ti:diffusion"

// atomServer answers as arXiv's API does for a query finding n entries:
// Atom with arXiv's and OpenSearch's namespaces; entry 0 has a journal
// reference and a DOI, entry 5 no summary;
// the first request for the second page gets a 503 with Retry-After.
func atomServer(t *testing.T, n int) (*httptest.Server, *atomic.Int64) {
	var requests atomic.Int64
	var busy atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		q := r.URL.Query()
		if q.Get("search_query") != query {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `<feed xmlns="http://www.w3.org/2005/Atom"><entry><title>Error</title><summary>malformed query</summary></entry></feed>`)
			return
		}
		start, _ := strconv.Atoi(q.Get("start"))
		count, _ := strconv.Atoi(q.Get("max_results"))
		if start == APIPageSize && !busy.Swap(true) {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		var b strings.Builder
		fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <title>arXiv Query</title><opensearch:totalResults>%d</opensearch:totalResults>`, n)
		for i := start; i < min(start+count, n); i++ {
			summary := fmt.Sprintf("  We diffuse %d things\n  in %d steps.\n", i, i%9)
			if i == 5 {
				summary = ""
			}
			fmt.Fprintf(&b, `
  <entry>
    <id>http://arxiv.org/abs/2401.%05dv2</id>
    <published>2024-01-%02dT10:00:00Z</published>
    <title>Diffusion \emph{models} number %d</title>
    <summary>%s</summary>
    <author><name>Ada Lovelace</name></author><author><name>Author %d</name></author>
    <arxiv:journal_ref>%s</arxiv:journal_ref>%s
    <arxiv:primary_category term="cs.LG"/>
  </entry>`, i, 1+i%28, i, summary, i, map[bool]string{true: "NeurIPS 2024", false: ""}[i == 0],
				map[bool]string{true: "\n    <arxiv:doi>10.5555/NIPS.0</arxiv:doi>", false: ""}[i == 0])
		}
		b.WriteString("\n</feed>\n")
		w.Header().Set("Content-Type", "application/atom+xml")
		io.WriteString(w, b.String())
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

func TestAPIQuery(t *testing.T) {
	srv, requests := atomServer(t, 450)
	r := NewAPIReader(context.Background(), fetch.New("arXiv", 0), srv.URL, query, 420)
	papers, rejected, err := seeds.Collect(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(papers) != 419 || len(rejected) != 1 || rejected[0].Line != 6 || !errors.Is(rejected[0], papersearch.ErrNoAbstract) {
		t.Fatalf("%d papers, rejected %v; want 419 and entry 6", len(papers), rejected)
	}
	p := papers[0]
	if p.ID != "arxiv:2401.00000" || p.Title != "Diffusion models number 0" || p.Abstract != "We diffuse 0 things in 0 steps." ||
		p.Year != 2024 || p.Venue != "NeurIPS 2024" || p.URL != "https://arxiv.org/abs/2401.00000" ||
		strings.Join(p.Authors, "|") != "Ada Lovelace|Author 0" {
		t.Errorf("paper 0: %+v", p)
	}
	want := []papersearch.Source{{ID: "arxiv:2401.00000", URL: "https://arxiv.org/abs/2401.00000"},
		{ID: "doi:10.5555/nips.0", URL: "https://doi.org/10.5555/NIPS.0"}}
	if !slices.Equal(p.Sources, want) {
		t.Errorf("paper 0 sources %+v, want %+v", p.Sources, want)
	}
	if papers[1].Venue != "arXiv" || len(papers[1].Sources) != 1 {
		t.Errorf("paper 1: venue %q, sources %+v", papers[1].Venue, papers[1].Sources)
	}
	// Pages of 200, 200 and 20, and the 503 retried.
	if n := requests.Load(); n != 4 {
		t.Errorf("%d requests, want 4", n)
	}
}

func TestAPIRefusesABadQuery(t *testing.T) {
	srv, _ := atomServer(t, 10)
	_, err := NewAPIReader(context.Background(), fetch.New("arXiv", 0), srv.URL, "ti:(", 10).Next()
	if !errors.Is(err, fetch.ErrRefused) || !strings.Contains(err.Error(), "arXiv: HTTP 400") {
		t.Errorf("err = %v", err)
	}
}

// TestAPIResume: a reader moved to where another stopped asks only for the
// results after it, and gives exactly the rest.
func TestAPIResume(t *testing.T) {
	srv, requests := atomServer(t, 450)
	first := NewAPIReader(context.Background(), fetch.New("arXiv", 0), srv.URL, query, 420)
	for range 250 {
		if _, err := first.Next(); err != nil && !errors.As(err, new(*seeds.LineError)) {
			t.Fatal(err)
		}
	}
	asked := requests.Load()
	rest := NewAPIReader(context.Background(), fetch.New("arXiv", 0), srv.URL, query, 420)
	if err := rest.Seek(first.Position()); err != nil {
		t.Fatal(err)
	}
	papers, _, err := seeds.Collect(rest)
	if err != nil {
		t.Fatal(err)
	}
	if len(papers) != 170 || papers[0].ID != "arxiv:2401.00250" || requests.Load()-asked != 1 {
		t.Errorf("resumed at %s: %d papers from %s in %d requests; want 170 from 2401.00250 in 1",
			first.Position(), len(papers), papers[0].ID, requests.Load()-asked)
	}
	if err := rest.Seek("3"); err == nil {
		t.Error("a reader that has read moved")
	}
}
