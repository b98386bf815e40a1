package csl

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
)

// TestReadZoteroExport reads a Zotero CSL-JSON export: journal articles
// get doi: ids, preprints arxiv: ids, others csl: ids; an item without an
// abstract and one that is not a CSL item are reported with their lines,
// and reading goes on.
func TestReadZoteroExport(t *testing.T) {
	f, err := os.Open("testdata/zotero.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := NewReader(f)
	papers, rejected, err := seeds.Collect(r)
	if err != nil {
		t.Fatal(err)
	}
	want := []papersearch.Paper{
		{ID: "doi:10.1038/nature14539", Title: "Deep learning", Venue: "Nature", Year: 2015,
			Authors: []string{"Yann LeCun", "Yoshua Bengio", "Google Brain Team"}, URL: "https://doi.org/10.1038/nature14539"},
		{ID: "arxiv:1706.03762", Title: "Attention Is All You Need", Year: 2017, Authors: []string{"Ashish Vaswani"},
			URL: "http://arxiv.org/abs/1706.03762v7"},
		{ID: "csl:web-1", Title: "A blog post", Year: 2023},
	}
	if len(papers) != len(want) {
		t.Fatalf("%d papers, want %d: %+v", len(papers), len(want), papers)
	}
	for i, w := range want {
		g := papers[i]
		if g.ID != w.ID || g.Title != w.Title || g.Venue != w.Venue || g.Year != w.Year || g.URL != w.URL ||
			strings.Join(g.Authors, "|") != strings.Join(w.Authors, "|") || g.Abstract == "" {
			t.Errorf("paper %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	if len(rejected) != 2 || !errors.Is(rejected[0], papersearch.ErrNoAbstract) || rejected[0].Line != 27 ||
		!strings.Contains(rejected[0].Error(), "item 17") || rejected[1].Line != 33 {
		t.Errorf("rejected = %v", rejected)
	}
}

func TestNotAnArray(t *testing.T) {
	if _, err := NewReader(strings.NewReader(`{"id": 1}`)).Next(); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("an object, not an array: err = %v", err)
	}
	if _, err := NewReader(strings.NewReader(`[]`)).Next(); !errors.Is(err, io.EOF) {
		t.Errorf("an empty array: err = %v, want io.EOF", err)
	}
}

// TestItemTypes: a paper's type is what its CSL item type names.
func TestItemTypes(t *testing.T) {
	r := NewReader(strings.NewReader(`[
		{"id": "a", "type": "article-journal", "abstract": "x", "container-title": "Nature"},
		{"id": "b", "type": "paper-conference", "abstract": "x"},
		{"id": "c", "type": "article", "abstract": "x", "URL": "https://arxiv.org/abs/2101.00001"},
		{"id": "d", "type": "webpage", "abstract": "x"}]`))
	for _, want := range []string{papersearch.TypeJournalArticle, papersearch.TypeProceedingsArticle, papersearch.TypePreprint, ""} {
		p, err := r.Next()
		if err != nil || p.Type != want {
			t.Errorf("%s: type %q, %v; want %q", p.ID, p.Type, err, want)
		}
	}
}

// TestIssuedDates: an item's date is its issued day or month, from
// date-parts or a raw ISO date; a year alone, or parts that are no day of
// the calendar, give none.
func TestIssuedDates(t *testing.T) {
	for _, tt := range []struct{ issued, want string }{
		{`{"date-parts":[[2026,3,14]]}`, "2026-03-14"},
		{`{"date-parts":[[2026,3]]}`, "2026-03"},
		{`{"date-parts":[["2026","11","2"]]}`, "2026-11-02"},
		{`{"date-parts":[[2026]]}`, ""},
		{`{"date-parts":[[2026,13,1]]}`, ""},
		{`{"date-parts":[[2026,4,31]]}`, ""},
		{`{"raw":"2025-07-09"}`, "2025-07-09"},
		{`{"raw":"2025-07"}`, "2025-07"},
		{`{"raw":"Summer 2025"}`, ""},
	} {
		src := `[{"type":"article-journal","title":"T","abstract":"An abstract.","issued":` + tt.issued + `}]`
		p, err := NewReader(strings.NewReader(src)).Next()
		if err != nil || p.Date != tt.want {
			t.Errorf("issued %s: date %q (%v), want %q", tt.issued, p.Date, err, tt.want)
		}
	}
}
