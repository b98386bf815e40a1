// Package csl reads CSL-JSON, the citation format Zotero exports natively:
// one JSON array of items, read one item at a time so a library of any
// size streams.
package csl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
	"github.com/papersearch/papersearch/seeds/arxiv"
)

// Item is the part of a CSL-JSON item that makes a paper.
type Item struct {
	ID             json.RawMessage `json:"id"` // a string or a number
	Type           string          `json:"type"`
	Title          string          `json:"title"`
	Abstract       string          `json:"abstract"`
	Author         []Name          `json:"author"`
	Issued         Date            `json:"issued"`
	ContainerTitle string          `json:"container-title"`
	DOI            string          `json:"DOI"`
	URL            string          `json:"URL"`
	Number         string          `json:"number"` // Zotero puts "arXiv:2401.01234" here for preprints
}

// Name is a CSL name: family and given, or a literal.
type Name struct {
	Family  string `json:"family"`
	Given   string `json:"given"`
	Literal string `json:"literal"`
}

// Date is a CSL date: date-parts ([[year, month, day]]) or a raw string.
type Date struct {
	DateParts [][]json.Number `json:"date-parts"`
	Raw       string          `json:"raw"`
}

// Reader reads the items of a CSL-JSON array.
type Reader struct {
	dec   *json.Decoder
	lines *lineIndex
	begun bool
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader {
	li := &lineIndex{r: r}
	dec := json.NewDecoder(li)
	dec.UseNumber()
	return &Reader{dec: dec, lines: li}
}

// Next returns the next item's paper. An item that is not a CSL object or
// has no abstract yields a *seeds.LineError with the line the item starts
// on (for the latter its Err wraps papersearch.ErrNoAbstract), and reading
// goes on; at the end of the array it returns io.EOF. A file that is not a
// JSON array, or breaks off, is a *seeds.FormatError that stops reading.
func (r *Reader) Next() (papersearch.Paper, error) {
	if !r.begun {
		tok, err := r.dec.Token()
		if err != nil {
			return papersearch.Paper{}, &seeds.FormatError{Err: fmt.Errorf("read CSL-JSON: %w", err)}
		}
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			return papersearch.Paper{}, &seeds.FormatError{Err: errors.New("read CSL-JSON: the file is not a JSON array of items")}
		}
		r.begun = true
	}
	if !r.dec.More() {
		return papersearch.Paper{}, io.EOF
	}
	line := r.lines.itemLine(r.dec.InputOffset())
	var it Item
	if err := r.dec.Decode(&it); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return papersearch.Paper{}, &seeds.LineError{Line: line, Err: fmt.Errorf("not a CSL item: %w", err)}
		}
		return papersearch.Paper{}, &seeds.FormatError{Err: fmt.Errorf("read CSL-JSON at line %d: %w", line, err)}
	}
	p, err := Paper(it)
	if err != nil {
		return p, &seeds.LineError{Line: line, Err: fmt.Errorf("item %s: %w", strings.Trim(string(it.ID), `"`), err)}
	}
	return p, nil
}

// arxivRef finds an arXiv identifier in a URL or a Zotero number field.
var arxivRef = regexp.MustCompile(`(?:arxiv\.org/(?:abs|pdf)/|arXiv:\s*)(` + arxiv.IDPattern + `)(?:v\d+)?`) // read-only

// Paper turns an item into a paper. Its id is stable across exports:
// doi:<DOI> when the item has one, else arxiv:<id> when its URL or number
// names an arXiv e-print, else csl:<item id>; its type from the item's
// (itemTypes).
func Paper(it Item) (papersearch.Paper, error) {
	p := papersearch.Paper{
		Title:    it.Title,
		Abstract: it.Abstract,
		Venue:    it.ContainerTitle,
		URL:      it.URL,
		Year:     it.Issued.year(),
		Date:     it.Issued.day(),
		Type:     itemTypes[it.Type],
	}
	for _, n := range it.Author {
		name := n.Literal
		if name == "" {
			name = strings.TrimSpace(n.Given + " " + n.Family)
		}
		p.Authors = append(p.Authors, name)
	}
	arxiv := ""
	if m := arxivRef.FindStringSubmatch(it.URL + " " + it.Number); m != nil {
		arxiv = m[1]
	}
	p = seeds.Identify(p, it.DOI, arxiv, "csl:"+strings.Trim(string(it.ID), `"`))
	return papersearch.Complete(p)
}

// itemTypes are the paper types CSL's item types name. CSL 1.0.2's
// "article" is a preprint or working paper; Zotero exports arXiv papers so.
var itemTypes = map[string]string{ // read-only
	"article-journal": papersearch.TypeJournalArticle, "paper-conference": papersearch.TypeProceedingsArticle,
	"article": papersearch.TypePreprint, "book": papersearch.TypeBook, "chapter": papersearch.TypeBookChapter,
	"thesis": papersearch.TypeThesis, "report": papersearch.TypeReport,
}

// year is the date's year, 0 when it has none.
// day is the date as a paper's date (papersearch.DatePattern): the day or
// month of its date-parts, else of its raw string when that is one; "".
func (d Date) day() string {
	if len(d.DateParts) > 0 && len(d.DateParts[0]) >= 2 {
		var parts [3]int64
		for i, n := range d.DateParts[0][:min(3, len(d.DateParts[0]))] {
			v, err := n.Int64()
			if err != nil {
				return ""
			}
			parts[i] = v
		}
		s := fmt.Sprintf("%04d-%02d", parts[0], parts[1])
		if len(d.DateParts[0]) >= 3 {
			s += fmt.Sprintf("-%02d", parts[2])
		}
		if _, _, ok := papersearch.ParseDate(s); ok {
			return s
		}
		return ""
	}
	if raw := strings.TrimSpace(d.Raw); len(raw) >= len("2006-01") {
		for _, s := range []string{raw[:min(len(raw), len(time.DateOnly))], raw[:len("2006-01")]} {
			if _, _, ok := papersearch.ParseDate(s); ok {
				return s
			}
		}
	}
	return ""
}

func (d Date) year() int {
	if len(d.DateParts) > 0 && len(d.DateParts[0]) > 0 {
		if y, err := d.DateParts[0][0].Int64(); err == nil {
			return int(y)
		}
	}
	var y int
	if len(d.Raw) >= 4 {
		fmt.Sscanf(d.Raw[:4], "%d", &y)
	}
	return y
}

// lineIndex passes a reader through and remembers where each line starts,
// and the bytes not yet consumed, so the offset a decoder reports can be
// named by the line its next item starts on.
type lineIndex struct {
	r       io.Reader
	read    int64
	starts  []int64 // offsets just after each newline
	base    int64   // the offset of pending[0]
	pending []byte  // bytes read from base on
}

func (l *lineIndex) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for i, c := range p[:n] {
		if c == '\n' {
			l.starts = append(l.starts, l.read+int64(i)+1)
		}
	}
	l.pending = append(l.pending, p[:n]...)
	l.read += int64(n)
	return n, err
}

// itemLine returns the 1-based line of the first byte at or after offset
// that is neither white space nor a comma (where the next item starts),
// and forgets the bytes before offset.
func (l *lineIndex) itemLine(offset int64) int {
	if k := offset - l.base; k > 0 && k <= int64(len(l.pending)) {
		l.pending = l.pending[k:]
		l.base = offset
	}
	for _, c := range l.pending[max(0, offset-l.base):] {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != ',' {
			break
		}
		offset++
	}
	return sort.Search(len(l.starts), func(i int) bool { return l.starts[i] > offset }) + 1
}
