package bibtex

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
)

func TestAuthors(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
	}{
		{"Vaswani, Ashish and Shazeer, Noam and others", "Ashish Vaswani|Noam Shazeer"},
		{"Yann LeCun and Geoffrey Hinton", "Yann LeCun|Geoffrey Hinton"},
		{"{Barnes and Noble, Inc.} and Doe, Jr, John", "Barnes and Noble, Inc.|John Doe Jr"},
		{`G{\"o}del, Kurt AND M\"uller, J.`, "Kurt Gödel|J. Müller"},
		{"", ""},
	} {
		if got := strings.Join(Authors(tt.in), "|"); got != tt.want {
			t.Errorf("Authors(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestReadZoteroExport reads a library with every awkward part: the good
// entries become papers with stable ids, the one without an abstract and
// the malformed one are reported by line, and reading goes on past both.
func TestReadZoteroExport(t *testing.T) {
	f, err := os.Open("testdata/zotero.bib")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := NewReader(f)
	papers, rejected, err := seeds.Collect(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(papers) != 4 {
		t.Fatalf("%d papers, want 4: %+v", len(papers), papers)
	}
	want := []papersearch.Paper{
		{ID: "doi:10.5555/3295222.3295349", Title: "Attention Is All You Need",
			Authors: []string{"Ashish Vaswani", "Noam Shazeer", "Niki Parmar"},
			Venue:   "Advances in Neural Information Processing Systems 30", Year: 2017,
			URL: "https://doi.org/10.5555/3295222.3295349"},
		{ID: "bibtex:gödel-style", Title: "Über formal unentscheidbare Sätze – a test of decoding",
			Authors: []string{"Kurt Gödel", "Pál Erdős", "Jean François", "Jan Łukasiewicz", "Jürgen Müller"},
			Venue:   "Monatshefte für Mathematik", Year: 1931},
		{ID: "arxiv:1234.56789", Title: "Deep learning", Authors: []string{"Yann LeCun", "Yoshua Bengio", "Geoffrey Hinton"},
			Venue: "Nature", Year: 2015, URL: "https://arxiv.org/abs/1234.56789"},
		{ID: "arxiv:2401.01234", Title: "An e-print", Authors: []string{"Jane Doe"}, Year: 2024,
			URL: "https://arxiv.org/abs/2401.01234"},
	}
	for i, w := range want {
		got := papers[i]
		if got.ID != w.ID || got.Title != w.Title || strings.Join(got.Authors, "|") != strings.Join(w.Authors, "|") ||
			got.Venue != w.Venue || got.Year != w.Year || got.URL != w.URL {
			t.Errorf("paper %d:\n got %+v\nwant %+v", i, got, w)
		}
	}
	if !strings.HasPrefix(papers[0].Abstract, "The dominant sequence") || strings.Contains(papers[0].Abstract, "{") ||
		strings.Contains(papers[0].Abstract, "\n") {
		t.Errorf("abstract not decoded: %q", papers[0].Abstract)
	}
	if a := papers[1].Abstract; !strings.Contains(a, "every consistent") || !strings.Contains(a, "50%") ||
		!strings.Contains(a, "naïve") || !strings.Contains(a, "“Quoted” text—with a dash") {
		t.Errorf("abstract not decoded: %q", a)
	}
	if len(rejected) != 2 {
		t.Fatalf("rejected %v, want the entry without an abstract and the malformed one", rejected)
	}
	if !errors.Is(rejected[0], papersearch.ErrNoAbstract) || !strings.Contains(rejected[0].Error(), "noabstract2020") || rejected[0].Line != 29 {
		t.Errorf("first rejection: %v (line %d)", rejected[0], rejected[0].Line)
	}
	if !errors.Is(rejected[1], errSyntax) || rejected[1].Line != 35 {
		t.Errorf("second rejection: %v (line %d)", rejected[1], rejected[1].Line)
	}
}
