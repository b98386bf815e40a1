package bibtex

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds/latex"
)

// Format writes a paper as one BibTeX entry under its Key, of the entry
// type its Type names (see entryOf: a journal article is an @article with
// its venue as the journal). Every value is written so that BibTeX's brace
// counting, and so any BibTeX parser, ends it where it ends (see Value);
// authors are written last name first (Name), a DOI the paper is known by
// as doi (doiOf), and the note names the id as GET /v1/papers/{id} takes
// it (noteID). The Reader reads back the
// paper's own fields (the url's braces and backslashes percent-encoded,
// which names the same URL; maths as latex.Decode reads it).
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
	var authors []string
	for _, a := range p.Authors {
		if n := Name(a); n != "" {
			authors = append(authors, n)
		}
	}
	field("author", strings.Join(authors, " and "))
	field(venueField, Value(p.Venue))
	if p.Year != 0 {
		field("year", strconv.Itoa(p.Year))
	}
	field("date", p.Date) // biblatex's; digits and hyphens only
	field("doi", doiValue(doiOf(p)))
	field("url", urlValue(p.URL))
	field("abstract", Value(p.Abstract))
	field("note", noteID(p.ID))
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
// that every BibTeX parser ends where it ends and that LaTeX typesets as
// the text. Maths (latex.Spans: between $ signs, as arXiv abstracts hold
// it) is written as LaTeX maths that keeps its commands
// (latex.EncodeMath); a formula that is not well formed is written as its
// source, as text. Text has every character that BibTeX or LaTeX reads
// specially escaped (latex.Encode: braces as \textbraceleft{} and
// \textbraceright{}, since BibTeX counts a brace even after a backslash,
// so that no value can end early or open another entry); in a value that
// holds LaTeX, the text's own markup (\textbf{x}, accents, \%) is decoded
// first, so it is not escaped twice and none of its commands reach a
// document that cites it. latex.Decode, and so the Reader, turns a value
// back into the text, white space collapsed (and maths as Decode reads it).
func Value(s string) string {
	s = papersearch.StripControls(s) // a paper stored before Complete removed them
	markup := latex.HasMarkup(s)
	var b strings.Builder
	for _, sp := range latex.Spans(s) {
		if sp.Math {
			if m, ok := latex.EncodeMath(sp.Text); ok {
				b.WriteString(sp.Open + m + sp.Close)
			} else {
				b.WriteString(latex.Encode(sp.Open + sp.Text + sp.Close))
			}
			continue
		}
		t := sp.Text
		if markup {
			t = latex.Decode(literalDollars(t))
		}
		// Decode and Encode trim: the space between text and maths stays.
		if strings.IndexFunc(sp.Text, unicode.IsSpace) == 0 {
			b.WriteByte(' ')
		}
		b.WriteString(latex.Encode(t))
		if r, _ := utf8.DecodeLastRuneInString(sp.Text); unicode.IsSpace(r) {
			b.WriteByte(' ')
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// literalDollars escapes the $ signs of text in which latex.Spans found no
// maths, which latex.Decode would drop as math shifts: they are dollars.
func literalDollars(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			b.WriteByte('\\')
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case '$':
			b.WriteString(`\$`)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// plain is a name or other text as plain text: control characters
// removed, LaTeX decoded when it holds any.
func plain(s string) string {
	s = papersearch.StripControls(s)
	if latex.HasMarkup(s) {
		s = latex.Decode(s)
	}
	return s
}

// urlValue writes a URL for BibTeX: as it is (URL fields are verbatim),
// in URIForm, which percent-encodes the characters that BibTeX's brace
// counting or LaTeX would read, braces, backslash and white space, among
// those a URI may not hold (RFC 3986: the same URL).
func urlValue(u string) string { return papersearch.URIForm(u) }

// doiOf is the DOI a paper is known by: its id's or a source's (doi:…),
// "" when it has none. It is what the Reader identifies the paper by when
// read back.
func doiOf(p papersearch.Paper) string {
	if doi, ok := papersearch.CutDOI(p.ID); ok {
		return doi
	}
	for _, s := range p.Sources {
		if doi, ok := papersearch.CutDOI(s.ID); ok {
			return doi
		}
	}
	return ""
}

// doiValue is a DOI as the doi field holds it: as it is, since biblatex
// reads the field verbatim and the Reader takes it as it stands (a DOI's
// "<" or "%" percent-encoded would name another DOI), or "" when it holds
// a brace or a backslash, which no field holds verbatim; the note still
// names the paper then.
func doiValue(doi string) string {
	if strings.ContainsAny(doi, `{}\`) {
		return ""
	}
	return doi
}

// noteID writes the note that names the paper's id: "papersearch id:
// \url{…}" with the id as a URL path segment (url.PathEscape), so that
// what a reader copies from the note, as the file has it or as LaTeX
// prints it (\url prints its argument verbatim), is what GET
// /v1/papers/{id} takes. Most ids are written as they are (letters,
// digits, "-_.:"); any character that LaTeX or BibTeX reads specially,
// braces and backslashes as in "bibtex:Erd{\H{o}}s1959", or that a path
// cannot hold ("/", spaces, non-ASCII), is percent-encoded, never decoded
// (that id is not "bibtex:Erdős1959").
func noteID(id string) string {
	return `papersearch id: \url{` + url.PathEscape(id) + "}"
}

// Key is a paper's citation key: the first author's last name (as Name
// splits it, without particles or suffix), the year, the first
// significant title word, and 4 hex digits of the id's hash, in ASCII
// (accents folded: García is garcia), so it is readable and the same for
// the same paper every time.
func Key(p papersearch.Paper) string {
	name := "anon"
	if len(p.Authors) > 0 {
		if last := splitStored(p.Authors[0]).last; last != "" {
			name = last
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

// maxKeyPart is the most bytes of a name or a title word a key takes, so
// that no key is past the Reader's MaxKeyBytes (the longest of the 29,100
// shared ML papers' are 22 and 34).
const maxKeyPart = 40

// keyPart keeps the ASCII letters and digits of s, accents folded,
// lower-cased, at most maxKeyPart of them.
func keyPart(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(papersearch.Fold(s)) {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) && b.Len() < maxKeyPart {
			b.WriteRune(r)
		}
	}
	return b.String()
}
