package bibtex

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
	"github.com/papersearch/papersearch/seeds/latex"
)

// hostile are papers whose fields try to end a value early, open another
// entry, or be read as LaTeX.
var hostile = []papersearch.Paper{
	{ID: "h1", Title: "Evil} {Title", Abstract: "Closes a brace } and opens { another @misc{x, title={Injected}}",
		Authors: []string{"A}@misc{y,", "Jo and Bo", "Smith, J."}, Venue: "Conf}}", Year: 2020, Date: "2020-02-29",
		URL: "https://x.org/a}}@misc{x,title={Injected}}"},
	{ID: "h2", Title: `Back\ slash \{ 100% of $5 & #1 _x_ ~ ^ -- --- ` + "``q'' 'single'",
		Abstract: `A \ lone backslash, a trailing one \`, URL: "https://example.org/~user/p%C3%BC?a=1&b=2#frag_x"},
	{ID: "h3", Title: "García and Schölkopf on naïve Bayes", Abstract: "Ünïcödé stays as it is: 東京, ℓ₂, α-β.",
		Authors: []string{"José García", "Bernhard Schölkopf"}},
	{ID: "h4", Title: "Title", Abstract: "}}}}}} unbalanced the other way {{{{", Authors: []string{"}"}},
}

// TestFormatRoundTrips: every hostile paper is one entry that the Reader
// reads back with its own fields (the url's braces percent-encoded, a name
// with BibTeX's commas first name first), and nothing else.
func TestFormatRoundTrips(t *testing.T) {
	var file strings.Builder
	for _, p := range hostile {
		file.WriteString(Format(p) + "\n")
	}
	papers, rejected, err := seeds.Collect(NewReader(strings.NewReader(file.String())))
	if err != nil || len(rejected) != 0 || len(papers) != len(hostile) {
		t.Fatalf("read back %d papers, rejected %v, err %v, from\n%s", len(papers), rejected, err, file.String())
	}
	for i, want := range hostile {
		got := papers[i]
		wantURL := urlValue(want.URL)
		if got.Title != want.Title || got.Abstract != strings.Join(strings.Fields(want.Abstract), " ") || got.Venue != want.Venue ||
			got.Year != want.Year || got.URL != wantURL || !slices.Equal(got.Authors, writtenNames(want)) || got.Date != want.Date {
			t.Errorf("paper %d:\n got %+v\nwant %+v (url %s)", i, got, want, wantURL)
		}
	}
}

// TestFormatWritesDOI: a paper known by a DOI, as its id or a source's,
// is written with it as doi, by which the Reader knows it again; one
// without has no doi field.
func TestFormatWritesDOI(t *testing.T) {
	const sici = "10.1002/(sici)1097-4571(199806)49:8<693::aid-asi4>3.0.co;2-0" // a Wiley DOI of before 2000
	for _, tt := range []struct {
		p    papersearch.Paper
		want string
	}{
		{papersearch.Paper{ID: "doi:10.1234/abc.def-5", Abstract: "a"}, "10.1234/abc.def-5"},
		{papersearch.Paper{ID: "arxiv:2401.01234", Abstract: "a", Sources: []papersearch.Source{{ID: "arxiv:2401.01234"}, {ID: "doi:10.5555/x_y(z)"}}}, "10.5555/x_y(z)"},
		{papersearch.Paper{ID: "doi:10.1/{odd}", Abstract: "a"}, ""},
		{papersearch.Paper{ID: "doi:10.1/odd\\x", Abstract: "a"}, ""},
		{papersearch.Paper{ID: "doi:" + sici, Abstract: "a"}, sici},
		{papersearch.Paper{ID: "bibtex:k", Abstract: "a"}, ""},
	} {
		out := Format(tt.p)
		entries, err := collectEntries(out)
		if err != nil || len(entries) != 1 || entries[0].Fields["doi"] != tt.want {
			t.Errorf("%s: doi %q (%v), want %q, in\n%s", tt.p.ID, entries[0].Fields["doi"], err, tt.want, out)
		}
	}
	for _, id := range []string{"doi:10.1234/abc.def-5", "doi:" + sici} {
		papers, _, err := seeds.Collect(NewReader(strings.NewReader(Format(papersearch.Paper{ID: id, Title: "T", Abstract: "a"}))))
		if err != nil || len(papers) != 1 || papers[0].ID != id {
			t.Errorf("read back: %+v %v", papers, err)
		}
	}
}

// TestFormatKeepsMaths: maths is written as LaTeX maths that keeps its
// commands, a command that is no maths shown and not run; LaTeX in the
// text around it is written as its text, escaped once; dollars that are
// no maths stay dollars.
func TestFormatKeepsMaths(t *testing.T) {
	p := papersearch.Paper{ID: "x", Title: `$\textbf{UniCon3R}$: unified 3D with $\Gamma$-trace norm`,
		Abstract: `It lifts Pass@1 from 61.1\% to 74.8\% with $\alpha$-stable \input{/etc/passwd} noise at rate ` +
			`$O(1/\sqrt{n})$, $V \approx WH$, $\Sigma^\omega$ and $\input{/etc/passwd}$, for \emph{under} $5 or $10 a run.`}
	got := Format(p)
	for _, want := range []string{
		`title = {{$\textbf{UniCon3R}$: unified 3D with $\Gamma$-trace norm}}`,
		`abstract = {It lifts Pass@1 from 61.1\% to 74.8\% with $\alpha$-stable /etc/passwd noise at rate $O(1/\sqrt{n})$, ` +
			`$V \approx WH$, $\Sigma^{\omega}$ and ${\mbox{\textbackslash{}input}}{/etc/passwd}$, for under \$5 or \$10 a run.}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("export lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `\input`) || strings.Contains(got, `\textbackslash{}textbf`) {
		t.Errorf("LaTeX escaped twice or run:\n%s", got)
	}
	// Read back, the maths is the formulas it was (a reference manager's
	// export imported again is the same paper).
	papers, _, err := seeds.Collect(NewReader(strings.NewReader(got)))
	if err != nil || len(papers) != 1 {
		t.Fatalf("read back %+v, %v", papers, err)
	}
	if back := papers[0]; back.Title != p.Title || !strings.Contains(back.Abstract, `rate $O(1/\sqrt{n})$, $V \approx WH$, $\Sigma^{\omega}$`) ||
		!strings.HasSuffix(back.Abstract, `for under $5 or $10 a run.`) {
		t.Errorf("read back as %q, %q", back.Title, back.Abstract)
	}
}

// TestFormatWritesBadMathsAsSource: a formula LaTeX would stop at is
// written as its source, in text, which the Reader reads back as it was.
func TestFormatWritesBadMathsAsSource(t *testing.T) {
	p := papersearch.Paper{ID: "x", Title: "T", Abstract: `A bound $\widetilde{O(m/\epsilon^2)$ that $x$ has.`}
	got := Format(p)
	if want := `abstract = {A bound \$\textbackslash{}widetilde\textbraceleft{}O(m/\textbackslash{}epsilon\textasciicircum{}2)\$ that $x$ has.}`; !strings.Contains(got, want) {
		t.Errorf("export lacks %q:\n%s", want, got)
	}
	papers, _, err := seeds.Collect(NewReader(strings.NewReader(got)))
	if err != nil || len(papers) != 1 || !strings.HasPrefix(papers[0].Abstract, `A bound $\widetilde{O(m/\epsilon^2)$ that`) {
		t.Errorf("read back %+v, %v", papers, err)
	}
}

// TestNoteID: the note names the stored id as a URL path segment, inside
// \url, percent-encoding what LaTeX or a path would read specially.
func TestNoteID(t *testing.T) {
	for id, want := range map[string]string{
		"acl2021-2021.acl-long.24": `\url{acl2021-2021.acl-long.24}`,
		"iclr2019-B1x_q--t":        `\url{iclr2019-B1x_q--t}`,
		`bibtex:Erd{\H{o}}s1959`:   `\url{bibtex:Erd%7B%5CH%7Bo%7D%7Ds1959}`,
		"doi:10.1000/a b%41ü":      `\url{doi:10.1000%2Fa%20b%2541%C3%BC}`,
	} {
		if got := noteID(id); got != "papersearch id: "+want {
			t.Errorf("noteID(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestKeyFoldsAccents(t *testing.T) {
	p := papersearch.Paper{ID: "x", Title: "Über Äpfel und Birnen", Authors: []string{"José García"}, Year: 2019}
	if k := Key(p); !strings.HasPrefix(k, "garcia2019uber_") {
		t.Errorf("key %q, want garcia2019uber_…", k)
	}
}

// TestKeyTakesTheLastName: the key's name is the last name as Name splits
// it: not a suffix, not a particle.
func TestKeyTakesTheLastName(t *testing.T) {
	for author, want := range map[string]string{"Guy L. Steele Jr.": "steele2017", "Laurens van der Maaten": "maaten2017", `Jos\'e Garc\'{\i}a`: "garcia2017"} {
		p := papersearch.Paper{ID: "x", Title: "On", Authors: []string{author}, Year: 2017}
		if k := Key(p); !strings.HasPrefix(k, want+"_") {
			t.Errorf("%s: key %q, want %s_…", author, k, want)
		}
	}
}

// TestFormatTypes: each paper type is written as the entry type that
// names it, with its venue in that entry type's field, and read back as
// that type and venue.
func TestFormatTypes(t *testing.T) {
	for _, tt := range []struct {
		typ, venue, entry, field string
		back                     string // the type read back
	}{
		{papersearch.TypeJournalArticle, "Journal of Machine Learning Research", "article", "journal", papersearch.TypeJournalArticle},
		{papersearch.TypeProceedingsArticle, "NeurIPS 2024", "inproceedings", "booktitle", papersearch.TypeProceedingsArticle},
		{papersearch.TypePreprint, "arXiv", "misc", "howpublished", papersearch.TypePreprint},
		{papersearch.TypeBook, "MIT Press", "book", "publisher", papersearch.TypeBook},
		{papersearch.TypeBookChapter, "Handbook of Learning", "incollection", "booktitle", papersearch.TypeBookChapter},
		{papersearch.TypeThesis, "Stanford University", "phdthesis", "school", papersearch.TypeThesis},
		{papersearch.TypeReport, "Google Research", "techreport", "institution", papersearch.TypeReport},
		// BibTeX has no entry type for these: what it reads back is what
		// the entry says.
		{papersearch.TypeOther, "Zenodo", "misc", "howpublished", ""},
		{"", "ICML 2023", "inproceedings", "booktitle", papersearch.TypeProceedingsArticle},
		{"", "arXiv preprint arXiv:2101.00001", "misc", "howpublished", papersearch.TypePreprint},
	} {
		p := papersearch.Paper{ID: "x", Title: "A title", Abstract: "An abstract.", Venue: tt.venue, Type: tt.typ}
		out := Format(p)
		entries, err := collectEntries(out)
		if err != nil || len(entries) != 1 {
			t.Fatalf("%q: %d entries, %v, from\n%s", tt.typ, len(entries), err, out)
		}
		if e := entries[0]; e.Type != tt.entry || e.Fields[tt.field] != tt.venue {
			t.Errorf("%q: @%s with %s = %q, want @%s with %s = %q", tt.typ, e.Type, tt.field, e.Fields[tt.field], tt.entry, tt.field, tt.venue)
		}
		papers, _, err := seeds.Collect(NewReader(strings.NewReader(out)))
		if err != nil || len(papers) != 1 || papers[0].Type != tt.back || papers[0].Venue != tt.venue {
			t.Errorf("%q read back: %+v, %v; want type %q, venue %q", tt.typ, papers, err, tt.back, tt.venue)
		}
	}
}

// collectEntries reads every entry of a BibTeX text.
func collectEntries(text string) ([]*Entry, error) {
	r := NewReader(strings.NewReader(text))
	var out []*Entry
	for {
		e, err := r.NextEntry()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
}

// TestValueKeepsStrayBraces: a brace without its pair in text that also
// holds LaTeX (maths, a command) is text, written as \textbraceright{} or
// \textbraceleft{}, and read back; grouping braces still group.
func TestValueKeepsStrayBraces(t *testing.T) {
	for in, want := range map[string]string{
		"x $a$ and a stray } brace":    "x $a$ and a stray } brace", // maths stays LaTeX
		`\emph{x} stray } and { brace`: "x stray } and { brace",
		"a stray } brace":              "a stray } brace",
	} {
		v := Value(in)
		if strings.Count(v, "{") != strings.Count(v, "}") {
			t.Errorf("Value(%q) = %q: braces unbalanced", in, v)
		}
		if got := latex.Decode(v); got != want {
			t.Errorf("Value(%q) = %q, read back as %q, want %q", in, v, got, want)
		}
	}
}
