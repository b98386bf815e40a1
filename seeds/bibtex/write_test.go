package bibtex

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/seeds"
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
// reads back with its own fields (the url's braces percent-encoded), and
// nothing else.
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
			got.Year != want.Year || got.URL != wantURL || !slices.Equal(got.Authors, want.Authors) || got.Date != want.Date {
			t.Errorf("paper %d:\n got %+v\nwant %+v (url %s)", i, got, want, wantURL)
		}
	}
}

// TestFormatReadByBibtexparser: Python's bibtexparser, which nobody here
// wrote, parses the export of the hostile papers into the same entries,
// keys and raw field values as the Reader does.
func TestFormatReadByBibtexparser(t *testing.T) {
	if exec.Command("python3", "-c", "import bibtexparser").Run() != nil {
		testenv.Missing(t, "python3 with bibtexparser 2 is not installed (scripts/test installs it: pip install 'bibtexparser==2.*')")
	}
	var file strings.Builder
	for _, p := range hostile {
		file.WriteString(Format(p) + "\n")
	}
	cmd := exec.Command("python3", "-c", `
import sys, json, bibtexparser
lib = bibtexparser.parse_string(sys.stdin.read())
print(json.dumps({"failed": len(lib.failed_blocks), "entries": [
    {"type": e.entry_type, "key": e.key, "fields": {f.key: f.value for f in e.fields}} for e in lib.entries]}))
`)
	cmd.Stdin = strings.NewReader(file.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bibtexparser: %v", err)
	}
	var theirs struct {
		Failed  int
		Entries []struct {
			Type, Key string
			Fields    map[string]string
		}
	}
	if err := json.Unmarshal(out, &theirs); err != nil {
		t.Fatal(err)
	}
	r := NewReader(strings.NewReader(file.String()))
	var ours []*Entry
	for {
		e, err := r.NextEntry()
		if err != nil {
			break
		}
		ours = append(ours, e)
	}
	if theirs.Failed != 0 || len(theirs.Entries) != len(hostile) || len(ours) != len(hostile) {
		t.Fatalf("bibtexparser: %d entries, %d failed blocks; ours %d; want %d\n%s", len(theirs.Entries), theirs.Failed, len(ours), len(hostile), file.String())
	}
	for i, e := range theirs.Entries {
		o := ours[i]
		if e.Key != o.Key || e.Type != o.Type || len(e.Fields) != len(o.Fields) {
			t.Errorf("entry %d: bibtexparser %s %s %d fields, ours %s %s %d", i, e.Type, e.Key, len(e.Fields), o.Type, o.Key, len(o.Fields))
		}
		for name, v := range o.Fields {
			if got := e.Fields[name]; got != v {
				t.Errorf("entry %d field %s: bibtexparser %q, ours %q", i, name, e.Fields[name], v)
			}
		}
	}
}

// TestFormatDecodesLaTeX: a value that holds LaTeX (as arXiv abstracts
// do) is written as its text, escaped once, not as escaped LaTeX; none of
// its commands reach the file.
func TestFormatDecodesLaTeX(t *testing.T) {
	p := papersearch.Paper{ID: "x", Title: `$\textbf{UniCon3R}$: unified 3D`, Abstract: `It lifts Pass@1 from 61.1\% to 74.8\% with $\alpha$-stable \input{/etc/passwd} noise.`}
	got := Format(p)
	for _, want := range []string{"title = {{UniCon3R: unified 3D}}", `abstract = {It lifts Pass@1 from 61.1\% to 74.8\% with α-stable /etc/passwd noise.}`} {
		if !strings.Contains(got, want) {
			t.Errorf("export lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `\textbackslash{}textbf`) || strings.Contains(got, `\input`) {
		t.Errorf("LaTeX escaped twice or passed through:\n%s", got)
	}
}

func TestKeyFoldsAccents(t *testing.T) {
	p := papersearch.Paper{ID: "x", Title: "Über Äpfel und Birnen", Authors: []string{"José García"}, Year: 2019}
	if k := Key(p); !strings.HasPrefix(k, "garcia2019uber_") {
		t.Errorf("key %q, want garcia2019uber_…", k)
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
