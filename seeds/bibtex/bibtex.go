// Package bibtex reads BibTeX files (Zotero, Mendeley and JabRef exports)
// into papers, one entry at a time, so a library of any size streams.
//
// No BibTeX library could be fetched here (the module proxy refuses
// nickng/bibtex, jschaf/bibtex and caltechlibrary/bibtex), so the grammar is
// read by hand: @type{key, field = {braced} | "quoted" | number | macro,
// joined with #}, @string macros (and the month abbreviations), @comment and
// @preamble skipped; field values are decoded from LaTeX (latex.Decode).
package bibtex

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
	"github.com/papersearch/papersearch/seeds/latex"
)

// Entry is one BibTeX entry: its type and citation key, and its fields by
// lower-case name, values as written (LaTeX, braces kept).
type Entry struct {
	Type, Key string
	Fields    map[string]string
	Line      int // where the entry starts
}

// Reader reads the entries of a BibTeX file.
type Reader struct {
	r       *bufio.Reader
	line    int
	strings map[string]string // @string macros, by lower-case name
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader {
	months := map[string]string{}
	for i, m := range []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"} {
		months[m] = fmt.Sprint(i + 1)
	}
	return &Reader{r: bufio.NewReader(r), line: 1, strings: months}
}

// errSyntax marks a malformed entry.
var errSyntax = errors.New("malformed BibTeX")

// Next returns the next paper: an entry with a title and an abstract. An
// entry that is malformed or has no abstract yields a *seeds.LineError (its
// Err wraps papersearch.ErrNoAbstract for the latter) and reading goes on;
// at the end it returns io.EOF.
func (r *Reader) Next() (papersearch.Paper, error) {
	for {
		e, err := r.NextEntry()
		if err != nil {
			return papersearch.Paper{}, err
		}
		if e == nil {
			continue // @string, @comment, @preamble
		}
		p, err := Paper(*e)
		if err != nil {
			return p, &seeds.LineError{Line: e.Line, Err: fmt.Errorf("entry %s: %w", e.Key, err)}
		}
		return p, nil
	}
}

// NextEntry returns the next entry, nil for an @string, @comment or
// @preamble (after taking in an @string's macro), a *seeds.LineError for a
// malformed entry (reading resumes at the next @), or io.EOF.
func (r *Reader) NextEntry() (*Entry, error) {
	// Text outside entries is a comment.
	for {
		c, err := r.read()
		if err != nil {
			return nil, err
		}
		if c == '@' {
			break
		}
	}
	start := r.line
	typ := strings.ToLower(r.ident())
	r.space()
	open, err := r.read()
	if err != nil {
		return nil, r.malformed(start, "unexpected end of file")
	}
	if open != '{' && open != '(' {
		return nil, r.malformed(start, fmt.Sprintf("@%s is not followed by { or (", typ))
	}
	closer := '}'
	if open == '(' {
		closer = ')'
	}
	switch typ {
	case "comment", "preamble":
		_, err := r.balanced(open, closer)
		if err != nil {
			return nil, r.malformed(start, err.Error())
		}
		return nil, nil
	case "string":
		fields, err := r.fields(closer)
		if err != nil {
			return nil, r.malformed(start, err.Error())
		}
		for k, v := range fields {
			r.strings[k] = v
		}
		return nil, nil
	}
	r.space()
	key := strings.TrimSpace(r.until(",", string(closer)))
	c, err := r.read()
	if err != nil {
		return nil, r.malformed(start, "unexpected end of file")
	}
	e := &Entry{Type: typ, Key: key, Line: start, Fields: map[string]string{}}
	if c == closer {
		return e, nil
	}
	if e.Fields, err = r.fields(closer); err != nil {
		return nil, r.malformed(start, err.Error())
	}
	return e, nil
}

func (r *Reader) malformed(line int, why string) error {
	return &seeds.LineError{Line: line, Err: fmt.Errorf("%w: %s", errSyntax, why)}
}

// fields reads name = value pairs up to and including closer.
func (r *Reader) fields(closer rune) (map[string]string, error) {
	out := map[string]string{}
	for {
		r.space()
		c, err := r.peek()
		if err != nil {
			return nil, errors.New("unexpected end of file in an entry")
		}
		if c == closer {
			r.read()
			return out, nil
		}
		if c == ',' {
			r.read()
			continue
		}
		name := strings.ToLower(r.ident())
		if name == "" {
			return nil, fmt.Errorf("expected a field name, found %q", c)
		}
		r.space()
		if c, _ := r.read(); c != '=' {
			return nil, fmt.Errorf("field %s: expected =", name)
		}
		v, err := r.value(closer)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", name, err)
		}
		out[name] = v
	}
}

// value reads a field's value: parts joined with #.
func (r *Reader) value(closer rune) (string, error) {
	var b strings.Builder
	for {
		r.space()
		c, err := r.peek()
		if err != nil {
			return "", errors.New("unexpected end of file")
		}
		switch {
		case c == '{':
			r.read()
			s, err := r.balanced('{', '}')
			if err != nil {
				return "", err
			}
			b.WriteString(s)
		case c == '"':
			r.read()
			s, err := r.quoted()
			if err != nil {
				return "", err
			}
			b.WriteString(s)
		case unicode.IsDigit(c):
			b.WriteString(r.ident())
		default:
			name := strings.ToLower(r.ident())
			if name == "" {
				return "", fmt.Errorf("unexpected %q", c)
			}
			b.WriteString(r.strings[name]) // an undefined macro is empty
		}
		r.space()
		if c, _ := r.peek(); c != '#' {
			return b.String(), nil
		}
		r.read()
	}
}

// balanced reads up to the closer that balances an opener already read,
// and returns what is between (inner braces kept).
func (r *Reader) balanced(open, closer rune) (string, error) {
	var b strings.Builder
	depth := 1
	for {
		c, err := r.read()
		if err != nil {
			return "", errors.New("unbalanced braces")
		}
		switch c {
		case open:
			depth++
		case closer:
			if depth--; depth == 0 {
				return b.String(), nil
			}
		}
		b.WriteRune(c)
	}
}

// quoted reads a "quoted" value after its opening quote; quotes inside
// braces do not end it.
func (r *Reader) quoted() (string, error) {
	var b strings.Builder
	depth := 0
	for {
		c, err := r.read()
		if err != nil {
			return "", errors.New("unterminated quoted value")
		}
		switch {
		case c == '{':
			depth++
		case c == '}':
			depth--
		case c == '"' && depth == 0:
			return b.String(), nil
		}
		b.WriteRune(c)
	}
}

// ident reads a run of name characters.
func (r *Reader) ident() string {
	var b strings.Builder
	for {
		c, err := r.peek()
		if err != nil || !(unicode.IsLetter(c) || unicode.IsDigit(c) || strings.ContainsRune("_-:.+/", c)) {
			return b.String()
		}
		r.read()
		b.WriteRune(c)
	}
}

// until reads up to, not including, the first of the stop runes.
func (r *Reader) until(stops ...string) string {
	var b strings.Builder
	for {
		c, err := r.peek()
		if err != nil || strings.ContainsRune(strings.Join(stops, ""), c) {
			return b.String()
		}
		r.read()
		b.WriteRune(c)
	}
}

func (r *Reader) space() {
	for {
		c, err := r.peek()
		if err != nil || !unicode.IsSpace(c) {
			return
		}
		r.read()
	}
}

func (r *Reader) read() (rune, error) {
	c, _, err := r.r.ReadRune()
	if c == '\n' {
		r.line++
	}
	return c, err
}

func (r *Reader) peek() (rune, error) {
	c, _, err := r.r.ReadRune()
	if err != nil {
		return 0, err
	}
	return c, r.r.UnreadRune()
}

// arxivID is the form of an arXiv identifier, new (2401.01234) or old
// (cs/0112017), with an optional version.
var arxivID = regexp.MustCompile(`^(?:arXiv:)?([a-z-]+(?:\.[A-Z]{2})?/\d{7}|\d{4}\.\d{4,5})(?:v\d+)?$`) // read-only

// Paper turns an entry into a paper. Its id is stable across exports:
// doi:<DOI> when the entry has one, else arxiv:<id> for an arXiv e-print,
// else bibtex:<citation key>. The venue is the booktitle or journal.
func Paper(e Entry) (papersearch.Paper, error) {
	f := func(name string) string { return latex.Decode(e.Fields[name]) }
	p := papersearch.Paper{
		Title:    f("title"),
		Abstract: f("abstract"),
		Authors:  Authors(e.Fields["author"]),
		Venue:    firstOf(f("booktitle"), f("journal"), f("journaltitle")),
		URL:      f("url"),
	}
	if y := strings.TrimSpace(f("year")); len(y) >= 4 {
		fmt.Sscanf(y[:4], "%d", &p.Year)
	} else if d := strings.TrimSpace(f("date")); len(d) >= 4 {
		fmt.Sscanf(d[:4], "%d", &p.Year)
	}
	arxiv := ""
	if strings.EqualFold(e.Fields["archiveprefix"], "arxiv") || strings.EqualFold(e.Fields["eprinttype"], "arxiv") {
		if m := arxivID.FindStringSubmatch(strings.TrimSpace(e.Fields["eprint"])); m != nil {
			arxiv = m[1]
		}
	}
	p = seeds.Identify(p, e.Fields["doi"], arxiv, "bibtex:"+e.Key)
	return papersearch.Complete(p)
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// Authors splits a BibTeX author list ("Last, First and First Last and
// others") into names written first name first, decoded from LaTeX; "and"
// inside braces does not split, and "others" is dropped.
func Authors(field string) []string {
	var names []string
	depth, start := 0, 0
	add := func(raw string) {
		name := strings.TrimSpace(raw)
		if name == "" || strings.EqualFold(name, "others") {
			return
		}
		// "Last, First" and "Last, Jr, First" are written first name first.
		parts := splitTop(name, ',')
		switch len(parts) {
		case 2:
			name = parts[1] + " " + parts[0]
		case 3:
			name = parts[2] + " " + parts[0] + " " + parts[1]
		}
		names = append(names, latex.Decode(name))
	}
	lower := strings.ToLower(field)
	for i := 0; i < len(field); i++ {
		switch field[i] {
		case '{':
			depth++
		case '}':
			depth--
		default:
			if depth == 0 && strings.HasPrefix(lower[i:], " and ") {
				add(field[start:i])
				start = i + len(" and ")
				i = start - 1
			}
		}
	}
	add(field[start:])
	return names
}

// splitTop splits s at sep outside braces, trimming each part.
func splitTop(s string, sep byte) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
		case sep:
			if depth == 0 {
				parts = append(parts, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(parts, strings.TrimSpace(s[start:]))
}
