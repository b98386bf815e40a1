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
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

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
	r          *bufio.Reader
	line       int
	strings    map[string]string // @string macros, by lower-case name
	macroBytes int               // their values' length together
	refused    map[string]error  // macros not defined for their length, and why
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader {
	months := map[string]string{}
	for i, m := range []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"} {
		months[m] = fmt.Sprint(i + 1)
	}
	return &Reader{r: bufio.NewReader(r), line: 1, strings: months, refused: map[string]error{}}
}

// errSyntax marks a malformed entry.
var errSyntax = errors.New("malformed BibTeX")

// Bounds on what one file can make the reader hold, whatever its macros
// expand to: a field's value (as read, braces and macros expanded) is at
// most MaxValueBytes, a citation key at most MaxKeyBytes, and a file's
// @string macros together at most MaxMacroBytes. An entry past one is
// malformed (and reported), a macro past them is not defined; no value
// grows past its bound in memory. A paper's own limits (papersearch.Complete)
// then apply to what is decoded.
const (
	MaxValueBytes = 256 << 10
	MaxKeyBytes   = 1 << 10
	MaxMacroBytes = 4 << 20
)

// errTooLong is a value, key or macro past its bound.
var errTooLong = errors.New("too long")

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
		if _, err := r.balanced(open, closer, io.Discard); err != nil {
			return nil, r.malformed(start, err.Error())
		}
		return nil, nil
	case "string":
		fields, long, err := r.fields(closer)
		if err != nil {
			return nil, r.malformed(start, err.Error())
		}
		for k, why := range long {
			r.define(k, "", why)
		}
		for k, v := range fields {
			r.define(k, v, nil)
		}
		return nil, nil
	}
	r.space()
	key, err := r.key(closer)
	if err != nil {
		return nil, r.malformed(start, err.Error())
	}
	c, err := r.read()
	if err != nil {
		return nil, r.malformed(start, "unexpected end of file")
	}
	e := &Entry{Type: typ, Key: key, Line: start, Fields: map[string]string{}}
	if c == closer {
		return e, nil
	}
	fields, long, err := r.fields(closer)
	if err != nil {
		return nil, r.malformed(start, err.Error())
	}
	for _, name := range slices.Sorted(maps.Keys(long)) {
		return nil, r.malformed(start, fmt.Sprintf("entry %s: field %s: %v", key, name, long[name]))
	}
	e.Fields = fields
	return e, nil
}

// define sets macro name to v, or refuses it for why (a value past
// MaxValueBytes) or because the file's macros would pass MaxMacroBytes.
func (r *Reader) define(name, v string, why error) {
	r.macroBytes -= len(r.strings[name])
	delete(r.strings, name)
	delete(r.refused, name)
	if why == nil && r.macroBytes+len(v) > MaxMacroBytes {
		why = fmt.Errorf("%w: the file's macros would hold more than %d bytes", errTooLong, MaxMacroBytes)
	}
	if why != nil {
		r.refused[name] = why
		return
	}
	r.strings[name] = v
	r.macroBytes += len(v)
}

func (r *Reader) malformed(line int, why string) error {
	return &seeds.LineError{Line: line, Err: fmt.Errorf("%w: %s", errSyntax, why)}
}

// fields reads name = value pairs up to and including closer. A value
// past MaxValueBytes is read to its end and left out: long says, by field
// name, why.
func (r *Reader) fields(closer rune) (out map[string]string, long map[string]error, _ error) {
	out, long = map[string]string{}, map[string]error{}
	for {
		r.space()
		c, err := r.peek()
		if err != nil {
			return nil, nil, errors.New("unexpected end of file in an entry")
		}
		if c == closer {
			r.read()
			return out, long, nil
		}
		if c == ',' {
			r.read()
			continue
		}
		name := strings.ToLower(r.ident())
		if name == "" {
			return nil, nil, fmt.Errorf("expected a field name, found %q", c)
		}
		r.space()
		if c, _ := r.read(); c != '=' {
			return nil, nil, fmt.Errorf("field %s: expected =", name)
		}
		v, err := r.value()
		switch {
		case errors.Is(err, errTooLong):
			long[name] = err
		case err != nil:
			return nil, nil, fmt.Errorf("field %s: %w", name, err)
		default:
			out[name] = v
		}
	}
}

// bounded is a strings.Builder that keeps at most MaxValueBytes and
// remembers being given more.
type bounded struct {
	b    strings.Builder
	over error
}

func (w *bounded) Write(p []byte) (int, error) {
	if w.over == nil && w.b.Len()+len(p) > MaxValueBytes {
		w.over = fmt.Errorf("value %w: more than %d bytes", errTooLong, MaxValueBytes)
	}
	if w.over == nil {
		w.b.Write(p)
	}
	return len(p), nil
}

// value reads a field's value, parts joined with #, to its end; a value
// past MaxValueBytes, or one that uses a refused macro, is an error
// wrapping errTooLong once it is read.
func (r *Reader) value() (string, error) {
	var w bounded
	for {
		r.space()
		c, err := r.peek()
		if err != nil {
			return "", errors.New("unexpected end of file")
		}
		switch {
		case c == '{':
			r.read()
			if _, err := r.balanced('{', '}', &w); err != nil {
				return "", err
			}
		case c == '"':
			r.read()
			if err := r.quoted(&w); err != nil {
				return "", err
			}
		case unicode.IsDigit(c):
			io.WriteString(&w, r.ident())
		default:
			name := strings.ToLower(r.ident())
			if name == "" {
				return "", fmt.Errorf("unexpected %q", c)
			}
			if why, ok := r.refused[name]; ok && w.over == nil {
				w.over = fmt.Errorf("macro %s is not defined: %w", name, why)
			}
			io.WriteString(&w, r.strings[name]) // an undefined macro is empty
		}
		r.space()
		if c, _ := r.peek(); c != '#' {
			if w.over != nil {
				return "", w.over
			}
			return w.b.String(), nil
		}
		r.read()
	}
}

// balanced reads up to the closer that balances an opener already read,
// writing what is between (inner braces kept) to w.
func (r *Reader) balanced(open, closer rune, w io.Writer) (int, error) {
	depth, n := 1, 0
	var buf [utf8.UTFMax]byte
	for {
		c, err := r.read()
		if err != nil {
			return n, errors.New("unbalanced braces")
		}
		switch c {
		case open:
			depth++
		case closer:
			if depth--; depth == 0 {
				return n, nil
			}
		}
		k, _ := w.Write(buf[:utf8.EncodeRune(buf[:], c)])
		n += k
	}
}

// quoted reads a "quoted" value after its opening quote, writing it to w;
// quotes inside braces do not end it.
func (r *Reader) quoted(w io.Writer) error {
	depth := 0
	var buf [utf8.UTFMax]byte
	for {
		c, err := r.read()
		if err != nil {
			return errors.New("unterminated quoted value")
		}
		switch {
		case c == '{':
			depth++
		case c == '}':
			depth--
		case c == '"' && depth == 0:
			return nil
		}
		w.Write(buf[:utf8.EncodeRune(buf[:], c)])
	}
}

// key reads an entry's citation key, up to the comma or closer outside
// braces (a key may hold braces: Erd{\H{o}}s1959), trimmed.
func (r *Reader) key(closer rune) (string, error) {
	var b strings.Builder
	depth := 0
	for {
		c, err := r.peek()
		if err != nil {
			return "", errors.New("unexpected end of file in the citation key")
		}
		switch {
		case depth == 0 && (c == ',' || c == closer):
			return strings.TrimSpace(b.String()), nil
		case c == '{':
			depth++
		case c == '}':
			depth--
		}
		r.read()
		b.WriteRune(c)
		if b.Len() > MaxKeyBytes {
			return "", fmt.Errorf("citation key %w: more than %d bytes", errTooLong, MaxKeyBytes)
		}
	}
}

// ident reads a run of name characters, at most MaxKeyBytes of them (what
// follows a longer run is then read as what follows the name, and so is
// malformed).
func (r *Reader) ident() string {
	var b strings.Builder
	for {
		c, err := r.peek()
		if err != nil || !(unicode.IsLetter(c) || unicode.IsDigit(c) || strings.ContainsRune("_-:.+/", c)) || b.Len() >= MaxKeyBytes {
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
// else bibtex:<citation key>. The venue is the booktitle or journal, else
// what the entry type names the publisher by (a thesis's school, a
// report's institution, a book's publisher, a @misc's howpublished unless
// that is a link); the type comes from the entry type (typeOf).
func Paper(e Entry) (papersearch.Paper, error) {
	f := func(name string) string { return latex.Decode(e.Fields[name]) }
	publisher := f(venueField[strings.ToLower(e.Type)])
	if strings.Contains(publisher, "://") {
		publisher = ""
	}
	p := papersearch.Paper{
		Title:    f("title"),
		Abstract: f("abstract"),
		Authors:  Authors(e.Fields["author"]),
		Venue:    firstOf(f("booktitle"), f("journal"), f("journaltitle"), publisher),
		URL:      verbatimURL(e.Fields["url"]),
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
	p.Type = typeOf(e.Type, p, arxiv != "")
	p = seeds.Identify(p, e.Fields["doi"], arxiv, "bibtex:"+e.Key)
	return papersearch.Complete(p)
}

// venueField is the field naming where an entry of a type without a
// booktitle or journal was published.
var venueField = map[string]string{ // read-only
	"phdthesis": "school", "mastersthesis": "school", "thesis": "institution", "techreport": "institution",
	"report": "institution", "book": "publisher", "misc": "howpublished", "online": "howpublished",
}

// entryTypes are the paper types BibTeX's and biblatex's entry types name.
var entryTypes = map[string]string{ // read-only
	"article": papersearch.TypeJournalArticle, "inproceedings": papersearch.TypeProceedingsArticle,
	"conference": papersearch.TypeProceedingsArticle, "book": papersearch.TypeBook, "inbook": papersearch.TypeBookChapter,
	"incollection": papersearch.TypeBookChapter, "phdthesis": papersearch.TypeThesis, "mastersthesis": papersearch.TypeThesis,
	"thesis": papersearch.TypeThesis, "techreport": papersearch.TypeReport, "report": papersearch.TypeReport,
}

// typeOf is the paper type of an entry of that type: what the entry type
// names, except that an @article or @misc in a preprint server (Google
// Scholar's "journal = {arXiv preprint arXiv:…}") or with an arXiv e-print
// and no journal is a preprint, and any other @misc unknown.
func typeOf(entryType string, p papersearch.Paper, eprint bool) string {
	t := entryTypes[strings.ToLower(entryType)]
	if (t == papersearch.TypeJournalArticle || t == "") && (p.Venue != "" && !papersearch.Published(p) || p.Venue == "" && eprint) {
		return papersearch.TypePreprint
	}
	return t
}

// verbatimURL reads a url field as biblatex does, verbatim (a LaTeX
// reading would turn its ~ into a space), forgiving a backslash before one
// of the characters LaTeX would otherwise read (\_, \%, \#, \&, \~) and
// the braces of \url{…}.
func verbatimURL(v string) string {
	v = strings.TrimSpace(v)
	if inner, ok := strings.CutPrefix(v, `\url{`); ok && strings.HasSuffix(inner, "}") {
		v = strings.TrimSuffix(inner, "}")
	}
	return strings.NewReplacer(`\_`, "_", `\%`, "%", `\#`, "#", `\&`, "&", `\~`, "~").Replace(v)
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
