package bibtex

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds/latex"
)

// Format writes a paper as one BibTeX entry under its Key, of the entry
// type its Type names (see entryOf: a journal article is an @article with
// its venue as the journal). Every value is
// written so that BibTeX's brace counting, and so any BibTeX parser, ends
// it where it ends (see Value), and the Reader reads back the paper's own
// fields (the url's braces and backslashes percent-encoded, which names the
// same URL).
func Format(p papersearch.Paper) string {
	var b strings.Builder
	kind, venueField := entryOf(p)
	fmt.Fprintf(&b, "@%s{%s,\n", kind, Key(p))
	field := func(name, value string) {
		if value != "" {
			fmt.Fprintf(&b, "  %s = {%s},\n", name, value)
		}
	}
	if p.Title != "" {
		field("title", "{"+Value(p.Title)+"}") // double braces keep its capitals
	}
	authors := make([]string, len(p.Authors))
	for i, a := range p.Authors {
		authors[i] = "{" + Value(a) + "}" // braced: an "and" or a comma inside a name stays in it
	}
	field("author", strings.Join(authors, " and "))
	field(venueField, Value(p.Venue))
	if p.Year != 0 {
		field("year", strconv.Itoa(p.Year))
	}
	field("date", p.Date) // biblatex's; digits and hyphens only
	field("url", urlValue(p.URL))
	field("abstract", Value(p.Abstract))
	field("note", "papersearch id: "+Value(p.ID))
	b.WriteString("}\n")
	return b.String()
}

// entryOf is the entry type a paper is written as and the field that
// holds its venue there. A paper of unknown type is an @inproceedings
// when its venue is a publication (see papersearch.Published), else a
// @misc; the venue of a @misc is how it was published.
func entryOf(p papersearch.Paper) (entryType, venueField string) {
	switch p.Type {
	case papersearch.TypeJournalArticle:
		return "article", "journal"
	case papersearch.TypeProceedingsArticle:
		return "inproceedings", "booktitle"
	case papersearch.TypeBookChapter:
		return "incollection", "booktitle"
	case papersearch.TypeBook:
		return "book", "publisher"
	case papersearch.TypeThesis:
		return "phdthesis", "school"
	case papersearch.TypeReport:
		return "techreport", "institution"
	case "":
		if papersearch.Published(p) {
			return "inproceedings", "booktitle"
		}
	}
	return "misc", "howpublished"
}

// Value writes text as a BibTeX field value (without its outer braces)
// that latex.Decode, and so the Reader, turns back into the text, white
// space collapsed: plain text has every character that BibTeX or LaTeX
// reads specially escaped (braces as \textbraceleft{} and
// \textbraceright{}, since BibTeX counts a brace even after a backslash,
// so that no value can end early or open another entry); text that holds
// LaTeX (a command such as \textbf or math between $ signs, as arXiv
// abstracts do) is decoded to plain text first, so it is not escaped twice
// and none of its commands reach a document that cites it.
func Value(s string) string {
	s = papersearch.StripControls(s) // a paper stored before Complete removed them
	if latex.HasMarkup(s) {
		s = latex.Decode(s)
	}
	return latex.Encode(s)
}

// urlValue writes a URL for BibTeX: as it is (URL fields are verbatim),
// with the characters that BibTeX's brace counting or LaTeX would read,
// braces, backslash and white space, percent-encoded (RFC 3986: the same
// URL).
func urlValue(u string) string {
	return strings.NewReplacer("{", "%7B", "}", "%7D", `\`, "%5C", " ", "%20").Replace(u)
}

// Key is a paper's citation key: the first author's last name, the year,
// the first significant title word, and 4 hex digits of the id's hash, in
// ASCII (accents folded: García is garcia), so it is readable and the same
// for the same paper every time.
func Key(p papersearch.Paper) string {
	name := "anon"
	if len(p.Authors) > 0 {
		if parts := strings.Fields(p.Authors[0]); len(parts) > 0 {
			name = parts[len(parts)-1]
		}
	}
	word := ""
	for _, w := range strings.Fields(p.Title) {
		if w = keyPart(w); len(w) > 3 {
			word = w
			break
		}
	}
	sum := sha256.Sum256([]byte(p.ID))
	key := keyPart(name)
	if key == "" {
		key = "anon"
	}
	if p.Year != 0 {
		key += strconv.Itoa(p.Year)
	}
	return key + word + "_" + hex.EncodeToString(sum[:2])
}

// keyPart keeps the ASCII letters and digits of s, accents folded,
// lower-cased.
func keyPart(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(papersearch.Fold(s)) {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		}
	}
	return b.String()
}
