package arxiv

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
	"github.com/papersearch/papersearch/seeds/fetch"
	"github.com/papersearch/papersearch/seeds/fetch/fetchtest"
)

const query = "cat:cs.LG AND ti:diffusion"

func TestAPIQuery(t *testing.T) {
	up := fetchtest.ArXiv(t, query, 450, APIPageSize)
	r := NewAPIReader(context.Background(), fetch.New("arXiv", 0), up.URL, query, 420)
	papers, rejected, err := seeds.Collect(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(papers) != 419 || len(rejected) != 1 || rejected[0].Line != 6 || !errors.Is(rejected[0], papersearch.ErrNoAbstract) {
		t.Fatalf("%d papers, rejected %v; want 419 and entry 6", len(papers), rejected)
	}
	p := papers[0]
	if p.ID != "arxiv:2401.00000" || p.Title != "Diffusion models number 0" || p.Abstract != "We diffuse 0 things in 0 steps." ||
		p.Year != 2024 || p.Date != "2024-01-01" || p.Venue != "NeurIPS 2024" || p.URL != "https://arxiv.org/abs/2401.00000" ||
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
	if n := up.Requests(); n != 4 {
		t.Errorf("%d requests, want 4", n)
	}
}

func TestAPIRefusesABadQuery(t *testing.T) {
	up := fetchtest.ArXiv(t, query, 10, APIPageSize)
	_, err := NewAPIReader(context.Background(), fetch.New("arXiv", 0), up.URL, "ti:(", 10).Next()
	if !errors.Is(err, fetch.ErrRefused) || !strings.Contains(err.Error(), "arXiv: HTTP 400") {
		t.Errorf("err = %v", err)
	}
}

// TestAPIResume: a reader moved to where another stopped asks only for the
// results after it, and gives exactly the rest.
func TestAPIResume(t *testing.T) {
	up := fetchtest.ArXiv(t, query, 450, APIPageSize)
	first := NewAPIReader(context.Background(), fetch.New("arXiv", 0), up.URL, query, 420)
	for range 250 {
		if _, err := first.Next(); err != nil && !errors.As(err, new(*seeds.LineError)) {
			t.Fatal(err)
		}
	}
	asked := up.Requests()
	rest := NewAPIReader(context.Background(), fetch.New("arXiv", 0), up.URL, query, 420)
	if err := rest.Seek(first.Position()); err != nil {
		t.Fatal(err)
	}
	papers, _, err := seeds.Collect(rest)
	if err != nil {
		t.Fatal(err)
	}
	if len(papers) != 170 || papers[0].ID != "arxiv:2401.00250" || up.Requests()-asked != 1 {
		t.Errorf("resumed at %s: %d papers from %s in %d requests; want 170 from 2401.00250 in 1",
			first.Position(), len(papers), papers[0].ID, up.Requests()-asked)
	}
	if err := rest.Seek("3"); err == nil {
		t.Error("a reader that has read moved")
	}
}
