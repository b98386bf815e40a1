package bibtex

import (
	"slices"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
)

func TestName(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"María García", "García, María"},
		{"Jürgen Müller", "Müller, Jürgen"},
		{"Quoc V. Le", "Le, Quoc V."},
		{"Laurens van der Maaten", "van der Maaten, Laurens"},
		{"Laurens Van Der Maaten", "Van Der Maaten, Laurens"},
		{"Fernando De La Torre", "De La Torre, Fernando"},
		{"Van Nguyen", "Nguyen, Van"}, // the first word is a first name
		{"Guy L. Steele Jr.", "Steele, Jr., Guy L."},
		{"Hal Daumé III", "Daumé, III, Hal"},
		{"Charles Jr.", "Jr., Charles"}, // two words: no suffix without a last name
		{"Florence d’Alché-Buc", "d’Alché-Buc, Florence"},
		{"xiao wang", "wang, xiao"},
		{"Mausam", "Mausam"},
		{"others", "{others}"},
		{"Jo and Bo", "Bo, Jo {and}"},
		// Commas as BibTeX's: von Last, First; von Last, Jr, First; First
		// Last, Jr.
		{"Smith, J.", "Smith, J."},
		{"Erdős, Paul", "Erdős, Paul"},
		{"van der Maaten, Laurens", "van der Maaten, Laurens"},
		{"García Márquez, Gabriel", "García Márquez, Gabriel"},
		{"King, Jr., Martin Luther", "King, Jr., Martin Luther"},
		{"Martin Luther King, Jr.", "King, Jr., Martin Luther"},
		{"Charles Babbage, III", "Babbage, III, Charles"},
		{"0 And 0, A", "0 {And} 0, A"}, // "and" braced in a last name of words (fuzzing found it)
		{"Roe, and Sons Jr, Jo", "Roe, {and} Sons Jr, Jo"},
		{"Charles, Jr.", "Jr., Charles{,}"}, // no last name before the suffix
		{"a, b, c, d", "d, a{,} b{,} c{,}"}, // more than BibTeX's three parts
		{"{,}", `\textbraceleft{}{,}\textbraceright{}`},
		{"A}@misc{y,", `A\textbraceright{}@misc\textbraceleft{}y{,}`},
		{`Jo\~{a}o  P. Costeira`, "Costeira, João P."},
		{"Takehisa Nishida & Kazuo Muto", `Muto, Takehisa Nishida \& Kazuo`},
		{"  ", ""},
	} {
		if got := Name(tt.in); got != tt.want {
			t.Errorf("Name(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestNameReadBack: the Reader reads every written name back as it was
// stored, first name first (white space collapsed, LaTeX decoded).
func TestNameReadBack(t *testing.T) {
	authors := []string{"María García", "Laurens van der Maaten", "Guy L. Steele Jr.", "Jo and Bo", "Smith, J.", "A}@misc{y,", "Mausam", "others", `Jo\~{a}o  P. Costeira`, "Rock And Roll, Jo", "{Barnes and Noble}"}
	var file strings.Builder
	file.WriteString(Format(papersearch.Paper{ID: "n", Title: "T", Abstract: "A.", Authors: authors}))
	papers, _, err := seeds.Collect(NewReader(strings.NewReader(file.String())))
	want := []string{"María García", "Laurens van der Maaten", "Guy L. Steele Jr.", "Jo and Bo", "J. Smith", "A}@misc{y,", "Mausam", "others", "João P. Costeira", "Jo Rock And Roll", "{Barnes and Noble}"}
	if err != nil || len(papers) != 1 || !slices.Equal(papers[0].Authors, want) {
		t.Errorf("read back %+v, %v, want %q, from\n%s", papers, err, want, file.String())
	}
}
