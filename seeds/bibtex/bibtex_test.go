package bibtex

import (
	"errors"
	"fmt"
	"os"
	"runtime"
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

// bomb returns a file of levels nested @string macros, each ten copies of
// the one before, and an entry whose abstract is the last: 8 levels
// expand to 10^8 copies of the first (114 MiB), and once killed the server.
func bomb(levels int) string {
	var b strings.Builder
	b.WriteString("@string{m0 = \"lolololololol\"}\n")
	for i := 1; i < levels; i++ {
		fmt.Fprintf(&b, "@string{m%d = %s}\n", i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("m%d # ", i-1), 10), " # "))
	}
	fmt.Fprintf(&b, "@article{bomb, title = {Bomb}, abstract = m%d}\n", levels-1)
	b.WriteString("@article{after, title = {After the bomb}, abstract = {A paper that follows it is read.}}\n")
	return b.String()
}

// TestMacroExpansionIsBounded: a file of nested macros cannot make the
// reader hold more than its bounds, whatever it expands to; the entry
// that uses such a macro is rejected with its line and key, and reading
// goes on to the next.
func TestMacroExpansionIsBounded(t *testing.T) {
	for _, levels := range []int{7, 8, 12} {
		in := bomb(levels)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		papers, rejected, err := seeds.Collect(NewReader(strings.NewReader(in)))
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
			t.Errorf("%d levels (%d bytes): reading allocated %d MiB", levels, len(in), grew>>20)
		}
		if len(papers) != 1 || papers[0].Title != "After the bomb" {
			t.Errorf("%d levels: papers %+v, want only the one after the bomb", levels, papers)
		}
		if len(rejected) == 0 || !strings.Contains(rejected[len(rejected)-1].Error(), "bomb") {
			t.Errorf("%d levels: rejected %v, want the bomb entry named", levels, rejected)
		}
	}
	// A value as long as the bound is read; one byte more is not.
	ok := "@misc{k, title = {T}, abstract = {" + strings.Repeat("a", 40000) + "}}"
	if papers, _, _ := seeds.Collect(NewReader(strings.NewReader(ok))); len(papers) != 1 {
		t.Error("a 40,000-character abstract was not read")
	}
	long := "@misc{k, title = {T}, note = {" + strings.Repeat("a", MaxValueBytes+1) + "}, abstract = {x}}"
	if _, rejected, _ := seeds.Collect(NewReader(strings.NewReader(long))); len(rejected) != 1 || !strings.Contains(rejected[0].Error(), "too long") {
		t.Errorf("a value past MaxValueBytes: rejected %v", rejected)
	}
	// A decoded abstract past the paper's limit is rejected as the API would.
	over := "@misc{k, title = {T}, abstract = {" + strings.Repeat("a", papersearch.MaxAbstractLength+1) + "}}"
	if _, rejected, _ := seeds.Collect(NewReader(strings.NewReader(over))); len(rejected) != 1 || !errors.Is(rejected[0], papersearch.ErrTooLong) {
		t.Errorf("an abstract past MaxAbstractLength: rejected %v", rejected)
	}
}

// TestKeyWithBraces reads an entry whose citation key holds braces whole,
// as bibtexparser does (it used to lose every field).
func TestKeyWithBraces(t *testing.T) {
	in := `@article{Erd{\H{o}}s1959, title = {On random graphs}, author = {Erd{\H{o}}s, Paul and R{\'e}nyi, Alfr{\'e}d},
  journal = {Publicationes Mathematicae}, year = {1959}, abstract = {We study random graphs.}}`
	papers, rejected, err := seeds.Collect(NewReader(strings.NewReader(in)))
	if err != nil || len(rejected) != 0 || len(papers) != 1 {
		t.Fatalf("papers %+v, rejected %v, err %v", papers, rejected, err)
	}
	p := papers[0]
	if p.ID != `bibtex:Erd{\H{o}}s1959` || p.Title != "On random graphs" || p.Year != 1959 ||
		strings.Join(p.Authors, "|") != "Paul Erdős|Alfréd Rényi" || p.Abstract != "We study random graphs." {
		t.Errorf("read %+v", p)
	}
}

// TestEntryTypes: a paper's type is what its entry type names, an arXiv
// paper exported as Google Scholar does (@article in "arXiv preprint …")
// or as a @misc e-print being a preprint.
func TestEntryTypes(t *testing.T) {
	const lib = `
@article{a, title={A}, abstract={x}, journal={Nature Machine Intelligence}}
@article{b, title={B}, abstract={x}, journal={arXiv preprint arXiv:2101.00001}}
@inproceedings{c, title={C}, abstract={x}, booktitle={Proceedings of ICML}}
@misc{d, title={D}, abstract={x}, eprint={2101.00002}, archiveprefix={arXiv}}
@misc{e, title={E}, abstract={x}, howpublished={\url{https://example.org}}}
@PhdThesis{f, title={F}, abstract={x}, school={MIT}}
@techreport{g, title={G}, abstract={x}, institution={OpenAI}}
@incollection{h, title={H}, abstract={x}, booktitle={Handbook}}
`
	papers, rejected, err := seeds.Collect(NewReader(strings.NewReader(lib)))
	if err != nil || len(rejected) != 0 {
		t.Fatal(err, rejected)
	}
	want := []struct{ typ, venue string }{
		{papersearch.TypeJournalArticle, "Nature Machine Intelligence"}, {papersearch.TypePreprint, "arXiv preprint arXiv:2101.00001"},
		{papersearch.TypeProceedingsArticle, "Proceedings of ICML"}, {papersearch.TypePreprint, ""}, {"", ""},
		{papersearch.TypeThesis, "MIT"}, {papersearch.TypeReport, "OpenAI"}, {papersearch.TypeBookChapter, "Handbook"},
	}
	if len(papers) != len(want) {
		t.Fatalf("%d papers, want %d", len(papers), len(want))
	}
	for i, w := range want {
		if papers[i].Type != w.typ || papers[i].Venue != w.venue {
			t.Errorf("entry %d: type %q venue %q, want %q %q", i, papers[i].Type, papers[i].Venue, w.typ, w.venue)
		}
	}
}

// TestDates: an entry's date is biblatex's date (its first day or month,
// for a range), else its year and month (a macro, a name or a number);
// nothing else is taken for one.
func TestDates(t *testing.T) {
	for _, tt := range []struct{ fields, want string }{
		{`date = {2026-03-14}`, "2026-03-14"},
		{`date = {2026-03/2026-05}`, "2026-03"},
		{`year = 2025, month = mar`, "2025-03"},
		{`year = {2025}, month = {September}`, "2025-09"},
		{`year = 2025, month = {11}`, "2025-11"},
		{`year = 2025`, ""},
		{`year = 2025, month = {Spring}`, ""},
		{`date = {2026}`, ""},
		{`date = {March 2026}, year = 2026, month = jun`, "2026-06"},
	} {
		src := `@article{k, title = {T}, abstract = {An abstract.}, ` + tt.fields + `}`
		p, err := NewReader(strings.NewReader(src)).Next()
		if err != nil || p.Date != tt.want {
			t.Errorf("%s: date %q (%v), want %q", tt.fields, p.Date, err, tt.want)
		}
	}
}

// TestUnclosedValueSwallowsNothing: a value whose closing brace or quote is
// missing ends, as malformed, at the next line that opens an entry, and
// that entry is read; a line inside a value that only mentions @ is text.
func TestUnclosedValueSwallowsNothing(t *testing.T) {
	text := "@comment{an entry commented out is no entry:\n@article{old, title={Old}, abstract={Commented out.}}\n}\n" +
		"@article{broken, title={Broken entry\n" +
		"@article{after, title={After the broken one}, abstract={It follows a broken entry.\n  @ home: still the abstract}, year=2021}\n" +
		"@misc{quoted, title = \"No closing quote\n   @inproceedings ( last, title={Last}, abstract={The last one.})\n"
	papers, rejected, err := seeds.Collect(NewReader(strings.NewReader(text)))
	if err != nil {
		t.Fatal(err)
	}
	if len(papers) != 2 || papers[0].Title != "After the broken one" || papers[0].Abstract != "It follows a broken entry. @ home: still the abstract" ||
		papers[1].Title != "Last" {
		t.Errorf("papers %+v", papers)
	}
	if len(rejected) != 2 || !errors.Is(rejected[0], errSyntax) || rejected[0].Line != 4 || !strings.Contains(rejected[0].Error(), "an entry begins at line 5") ||
		!errors.Is(rejected[1], errSyntax) || rejected[1].Line != 7 {
		t.Errorf("rejected %v", rejected)
	}
}
