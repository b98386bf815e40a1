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

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
	"github.com/papersearch/papersearch/seeds/arxiv"
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
		if _, err := r.balanced(open, closer, io.Discard, false); err != nil {
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
			if _, err := r.balanced('{', '}', &w, true); err != nil {
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

// arxivID is the form of an arXiv identifier, new (2401.01234) or old
// (cs/0112017), with an optional version.
var arxivID = regexp.MustCompile(`^(?:arXiv:)?(` + arxiv.IDPattern + `)(?:v\d+)?$`) // read-only

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
