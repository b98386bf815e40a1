package openalex

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
	"github.com/papersearch/papersearch/seeds/fetch"
	"github.com/papersearch/papersearch/seeds/fetch/fetchtest"
)

const filter = "concepts.id:C154945302,publication_year:2026"

func TestReadWorks(t *testing.T) {
	up := fetchtest.OpenAlex(t, filter, "me@example.org", 450, PageSize)
	r := NewReader(context.Background(), fetch.New("OpenAlex", 0), up.URL, filter, "me@example.org", 10_000)
	papers, rejected, err := seeds.Collect(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(papers) != 449 || len(rejected) != 1 || rejected[0].Line != 4 || !errors.Is(rejected[0], papersearch.ErrNoAbstract) {
		t.Fatalf("%d papers, rejected %v", len(papers), rejected)
	}
	if p := papers[0]; p.ID != "doi:10.1234/w0" || p.Abstract != "We study topic0 and we study." || p.Venue != "NeurIPS" || p.Date != "2026-01-01" ||
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
	if n := up.Requests(); n != 4 { // three pages and the 429
		t.Errorf("%d requests, want 4", n)
	}
	// A limit stops early.
	r = NewReader(context.Background(), fetch.New("OpenAlex", 0), up.URL, filter, "me@example.org", 5)
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
	up := fetchtest.OpenAlex(t, filter, "me@example.org", 10, PageSize)
	_, err := NewReader(context.Background(), fetch.New("OpenAlex", 0), up.URL, "bogus:1", "me@example.org", 10).Next()
	if !errors.Is(err, fetch.ErrRefused) || !strings.Contains(err.Error(), "OpenAlex: HTTP 403") {
		t.Errorf("err = %v", err)
	}
}

// TestResume: a reader moved to where another stopped asks again only for
// the page it stopped in, and gives exactly the rest.
func TestResume(t *testing.T) {
	up := fetchtest.OpenAlex(t, filter, "me@example.org", 450, PageSize)
	open := func() *Reader {
		return NewReader(context.Background(), fetch.New("OpenAlex", 0), up.URL, filter, "me@example.org", 10_000)
	}
	first := open()
	for range 250 {
		if _, err := first.Next(); err != nil && !errors.As(err, new(*seeds.LineError)) {
			t.Fatal(err)
		}
	}
	asked := up.Requests()
	rest := open()
	if err := rest.Seek(first.Position()); err != nil {
		t.Fatal(err)
	}
	papers, _, err := seeds.Collect(rest)
	if err != nil {
		t.Fatal(err)
	}
	if len(papers) != 200 || papers[0].ID != "doi:10.1234/w250" || up.Requests()-asked != 2 {
		t.Errorf("resumed at %q: %d papers from %s in %d requests; want 200 from W250 in 2",
			first.Position(), len(papers), papers[0].ID, up.Requests()-asked)
	}
	// At the end, a resumed reader asks for nothing.
	asked = up.Requests()
	done := open()
	if err := done.Seek(rest.Position()); err != nil {
		t.Fatal(err)
	}
	if _, err := done.Next(); !errors.Is(err, io.EOF) || up.Requests() != asked {
		t.Errorf("resumed at the end (%q): %v after %d requests", rest.Position(), err, up.Requests()-asked)
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
