package openalex

import (
	"context"
	"encoding/json"
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

const filter = "concepts.id:C154945302,publication_year:2026"

// worksServer answers GET /works as OpenAlex does for a filter finding n
// works, cursor-paged: the cursor is the next offset; work 3 has no
// abstract (a null inverted index), odd works have no DOI, every fifth has
// an arXiv version among its locations; the first
// request for the second page gets a 429 with Retry-After; every request
// must carry the mailto of the polite pool.
func worksServer(t *testing.T, n int) (*httptest.Server, *atomic.Int64) {
	var requests atomic.Int64
	var limited atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		q := r.URL.Query()
		if r.URL.Path != "/works" || q.Get("filter") != filter || q.Get("mailto") != "me@example.org" {
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"error":"Invalid query parameters error.","message":"filter is not valid"}`)
			return
		}
		offset := 0
		if c := q.Get("cursor"); c != "*" {
			offset, _ = strconv.Atoi(c)
			if offset == PageSize && !limited.Swap(true) {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
		}
		var results []map[string]any
		for i := offset; i < min(offset+PageSize, n); i++ {
			work := map[string]any{
				"id": fmt.Sprintf("https://openalex.org/W%d", 1000+i), "title": fmt.Sprintf("Work %d", i),
				"publication_year": 2026,
				"abstract_inverted_index": map[string][]int{"We": {0}, "study": {1}, fmt.Sprintf("topic%d", i): {2}, "and": {3},
					"we": {4}, "study.": {5}},
				"authorships":      []map[string]any{{"author": map[string]any{"display_name": "Ada Lovelace"}}},
				"primary_location": map[string]any{"source": map[string]any{"display_name": "NeurIPS"}, "landing_page_url": nil},
				"doi":              nil,
			}
			if i%2 == 0 {
				work["doi"] = fmt.Sprintf("https://doi.org/10.1234/W%d", i)
			}
			if i == 3 {
				work["abstract_inverted_index"] = nil
			}
			if i%5 == 0 { // an arXiv version among the locations
				work["locations"] = []map[string]any{{"landing_page_url": "https://doi.org/x"},
					{"landing_page_url": fmt.Sprintf("https://arxiv.org/abs/2601.%05dv3", i)}}
			}
			results = append(results, work)
		}
		var next *string
		if offset+PageSize < n {
			s := strconv.Itoa(offset + PageSize)
			next = &s
		}
		json.NewEncoder(w).Encode(map[string]any{"meta": map[string]any{"count": n, "next_cursor": next}, "results": results})
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

func TestReadWorks(t *testing.T) {
	srv, requests := worksServer(t, 450)
	r := NewReader(context.Background(), fetch.New("OpenAlex", 0), srv.URL, filter, "me@example.org", 10_000)
	papers, rejected, err := seeds.Collect(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(papers) != 449 || len(rejected) != 1 || rejected[0].Line != 4 || !errors.Is(rejected[0], papersearch.ErrNoAbstract) {
		t.Fatalf("%d papers, rejected %v", len(papers), rejected)
	}
	if p := papers[0]; p.ID != "doi:10.1234/w0" || p.Abstract != "We study topic0 and we study." || p.Venue != "NeurIPS" ||
		p.Year != 2026 || p.URL != "https://doi.org/10.1234/W0" || strings.Join(p.Authors, "|") != "Ada Lovelace" {
		t.Errorf("paper 0: %+v", p)
	}
	want := []papersearch.Source{{ID: "arxiv:2601.00000", URL: "https://arxiv.org/abs/2601.00000"},
		{ID: "doi:10.1234/w0", URL: "https://doi.org/10.1234/W0"}, {ID: "openalex:W1000", URL: "https://openalex.org/W1000"}}
	if !slices.Equal(papers[0].Sources, want) {
		t.Errorf("paper 0 sources %+v, want %+v", papers[0].Sources, want)
	}
	if p := papers[1]; p.ID != "openalex:W1001" || p.URL != "" || len(p.Sources) != 1 {
		t.Errorf("paper 1: %+v", p)
	}
	if p := papers[4]; p.ID != "arxiv:2601.00005" || p.URL != "https://arxiv.org/abs/2601.00005" { // work 3 was rejected
		t.Errorf("work 5, without a DOI but with an arXiv version: %+v", p)
	}
	if n := requests.Load(); n != 4 { // three pages and the 429
		t.Errorf("%d requests, want 4", n)
	}
	// A limit stops early.
	r = NewReader(context.Background(), fetch.New("OpenAlex", 0), srv.URL, filter, "me@example.org", 5)
	count := 0
	for {
		_, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		count++
	}
	if count != 5 {
		t.Errorf("limit 5 gave %d records", count)
	}
}

func TestRefused(t *testing.T) {
	srv, _ := worksServer(t, 10)
	_, err := NewReader(context.Background(), fetch.New("OpenAlex", 0), srv.URL, "bogus:1", "me@example.org", 10).Next()
	if !errors.Is(err, fetch.ErrRefused) || !strings.Contains(err.Error(), "OpenAlex: HTTP 403") {
		t.Errorf("err = %v", err)
	}
}

// TestResume: a reader moved to where another stopped asks again only for
// the page it stopped in, and gives exactly the rest.
func TestResume(t *testing.T) {
	srv, requests := worksServer(t, 450)
	open := func() *Reader {
		return NewReader(context.Background(), fetch.New("OpenAlex", 0), srv.URL, filter, "me@example.org", 10_000)
	}
	first := open()
	for range 250 {
		if _, err := first.Next(); err != nil && !errors.As(err, new(*seeds.LineError)) {
			t.Fatal(err)
		}
	}
	asked := requests.Load()
	rest := open()
	if err := rest.Seek(first.Position()); err != nil {
		t.Fatal(err)
	}
	papers, _, err := seeds.Collect(rest)
	if err != nil {
		t.Fatal(err)
	}
	if len(papers) != 200 || papers[0].ID != "doi:10.1234/w250" || requests.Load()-asked != 2 {
		t.Errorf("resumed at %q: %d papers from %s in %d requests; want 200 from W250 in 2",
			first.Position(), len(papers), papers[0].ID, requests.Load()-asked)
	}
	// At the end, a resumed reader asks for nothing.
	asked = requests.Load()
	done := open()
	if err := done.Seek(rest.Position()); err != nil {
		t.Fatal(err)
	}
	if _, err := done.Next(); !errors.Is(err, io.EOF) || requests.Load() != asked {
		t.Errorf("resumed at the end (%q): %v after %d requests", rest.Position(), err, requests.Load()-asked)
	}
}

// TestWorkTypes: a paper's type comes from the work's type, and for an
// article from its source's.
func TestWorkTypes(t *testing.T) {
	for _, tt := range []struct{ work, source, want string }{
		{"article", "journal", papersearch.TypeJournalArticle}, {"article", "conference", papersearch.TypeProceedingsArticle},
		{"article", "repository", papersearch.TypePreprint}, {"preprint", "", papersearch.TypePreprint},
		{"dissertation", "", papersearch.TypeThesis}, {"book-chapter", "book series", papersearch.TypeBookChapter},
		{"article", "", ""}, {"dataset", "repository", ""},
	} {
		var w work
		w.Type, w.PrimaryLocation.Source.Type = tt.work, tt.source
		if got := typeOf(w); got != tt.want {
			t.Errorf("work %q in a %q: %q, want %q", tt.work, tt.source, got, tt.want)
		}
	}
}
