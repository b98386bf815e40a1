package bibtex

import (
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/papersearch/papersearch"
)

// FuzzFormat: whatever a paper's title, abstract, author and id hold, its
// export is one entry that the Reader reads under its key, every value's
// braces balance as BibTeX counts them (a brace after a backslash too), the
// author is read back as the words it was stored with (first name first
// where it was stored with BibTeX's commas), and the note holds the id as a
// path segment.
func FuzzFormat(f *testing.F) {
	for _, p := range hostile {
		f.Add(p.Title, p.Abstract, strings.Join(p.Authors, "|"), p.ID)
	}
	f.Add(`$\Gamma$-trace norm`, `$O(1/\sqrt{n})$, $V \approx WH$, $\Sigma^\omega$ and $\input{x}$ for $5 or $10; $$\sum_i$$ \(k\)`,
		"Laurens van der Maaten|Guy L. Steele Jr.", `bibtex:Erd{\H{o}}s1959`)
	f.Add(`$\left\{ x \right.$`, `$\text{a^b}$ $y^\max$ $x^$ $\}\}$ $\\$`, `Jo\~{a}o and P.|{,}`, "x/y z%41")
	f.Fuzz(func(t *testing.T, title, abstract, authors, id string) {
		for _, s := range []string{title, abstract, authors, id} {
			if !utf8.ValidString(s) {
				t.Skip() // papersearch.Complete refuses it
			}
		}
		p := papersearch.Paper{ID: id, Title: title, Abstract: abstract, Authors: strings.Split(authors, "|")}
		out := Format(p)
		entries, err := collectEntries(out)
		if err != nil || len(entries) != 1 || entries[0].Key != Key(p) {
			t.Fatalf("%d entries (%v) from\n%s", len(entries), err, out)
		}
		e := entries[0]
		for name, v := range e.Fields {
			depth := 0
			for _, r := range v {
				if r == '{' {
					depth++
				} else if r == '}' {
					depth--
				}
				if depth < 0 {
					break
				}
			}
			if depth != 0 {
				t.Errorf("%s = {%s}: braces do not balance", name, v)
			}
		}
		var want []string
		for _, a := range writtenNames(p) {
			want = append(want, norm.NFC.String(strings.Join(strings.Fields(plain(a)), " "))) // as Decode composes it
		}
		if got := Authors(e.Fields["author"]); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("authors %q read back as %q from %s", want, got, e.Fields["author"])
		}
		if e.Fields["note"] != noteID(id) {
			t.Errorf("note %q, want %q", e.Fields["note"], noteID(id))
		}
	})
}
