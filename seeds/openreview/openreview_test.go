package openreview

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
	"github.com/papersearch/papersearch/seeds/fetch"
	"github.com/papersearch/papersearch/seeds/fetch/fetchtest"
)

const venue = "NeurIPS.cc/2026/Conference"

func TestReadVenue(t *testing.T) {
	up := fetchtest.OpenReview(t, venue, 2500, PageSize)
	r := NewReader(context.Background(), fetch.New("OpenReview", 0), up.URL, venue)
	papers, rejected, err := seeds.Collect(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(papers) != 2498 || len(rejected) != 2 {
		t.Fatalf("%d papers, %d rejected; want 2498 and 2", len(papers), len(rejected))
	}
	if !errors.Is(rejected[0], papersearch.ErrNoAbstract) || rejected[0].Line != 8 || rejected[1].Line != 12 {
		t.Errorf("rejected %v", rejected)
	}
	p := papers[0]
	if p.ID != "openreview:note0000" || p.Venue != "NeurIPS" || p.Year != 2026 || p.URL != "https://openreview.net/forum?id=note0000" ||
		p.Date != "2025-11-24" || // pdate 1764000000000
		strings.Join(p.Authors, "|") != "Ada Lovelace|Author 0" || p.Title != "Paper 0" {
		t.Errorf("paper 0: %+v", p)
	}
	// Three pages and the one answered 429.
	if n := up.Requests(); n != 4 {
		t.Errorf("%d requests, want 4", n)
	}
	if tag := DefaultTag(venue); tag != "neurips-2026" {
		t.Errorf("default tag %q", tag)
	}
}

// TestRefused: a venue the API does not know is an error naming
// OpenReview and the status, without retries.
func TestRefused(t *testing.T) {
	up := fetchtest.OpenReview(t, venue, 10, PageSize)
	r := NewReader(context.Background(), fetch.New("OpenReview", 0), up.URL, "ICLR.cc/2099/Conference")
	_, err := r.Next()
	if !errors.Is(err, fetch.ErrRefused) || !strings.Contains(err.Error(), "OpenReview") || !strings.Contains(err.Error(), "404") {
		t.Errorf("err = %v", err)
	}
	if up.Requests() != 1 {
		t.Errorf("%d requests for a refused one, want 1", up.Requests())
	}
}

// TestResume: a reader moved to where another stopped asks only for the
// notes after it, and gives exactly the rest.
func TestResume(t *testing.T) {
	up := fetchtest.OpenReview(t, venue, 2500, PageSize)
	first := NewReader(context.Background(), fetch.New("OpenReview", 0), up.URL, venue)
	for range 1500 {
		if _, err := first.Next(); err != nil && !errors.As(err, new(*seeds.LineError)) {
			t.Fatal(err)
		}
	}
	asked := up.Requests()
	rest := NewReader(context.Background(), fetch.New("OpenReview", 0), up.URL, venue)
	if err := rest.Seek(first.Position()); err != nil {
		t.Fatal(err)
	}
	papers, rejected, err := seeds.Collect(rest)
	if err != nil {
		t.Fatal(err)
	}
	if len(papers) != 1000 || len(rejected) != 0 || papers[0].ID != "openreview:note1500" || up.Requests()-asked != 1 {
		t.Errorf("resumed at %s: %d papers from %s in %d requests; want 1000 from note1500 in 1",
			first.Position(), len(papers), papers[0].ID, up.Requests()-asked)
	}
	if err := NewReader(context.Background(), nil, up.URL, venue).Seek("-1"); err == nil {
		t.Error("a negative position was taken")
	}
}
