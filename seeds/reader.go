package seeds

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/papersearch/papersearch"
)

// Format names a corpus file format.
type Format int

const (
	// Text is the seed format: a header line, then one abstract per
	// blank-line-separated paragraph, without titles.
	Text Format = iota + 1
	// JSONL holds one JSON object per line with the fields
	// id, title, abstract, authors, venue, year and url.
	JSONL
)

func (f Format) String() string {
	switch f {
	case Text:
		return "text"
	case JSONL:
		return "jsonl"
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// MaxRecordBytes bounds one JSONL line or one text paragraph, in bytes.
const MaxRecordBytes = 1 << 20

// LineError reports a record that could not be read. Reading goes on with the
// next record after one.
type LineError struct {
	Line int // 1-based line number where the record starts
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// FormatError is a file a reader cannot go on reading because of what it
// holds (not a JSON array, broken JSON): the file's fault, said in words
// about the file alone, which whoever sent the file may be shown.
type FormatError struct{ Err error }

func (e *FormatError) Error() string { return e.Err.Error() }
func (e *FormatError) Unwrap() error { return e.Err }

// ErrTooLong rejects a record longer than MaxRecordBytes. A LineError wraps
// it, a JSON decoding error or a *papersearch.FieldError.
var ErrTooLong = fmt.Errorf("record is longer than %d bytes", MaxRecordBytes)

// Reader yields the papers of a corpus one at a time, so a large file never
// sits in memory whole.
type Reader struct {
	br     *bufio.Reader
	buf    []byte // the current line, without its line ending
	format Format
	line   int // lines consumed so far
	header bool
}

// Decompressed returns a buffered reader of r's content: r itself, or what
// it decompresses to when it is a gzip stream.
func Decompressed(r io.Reader) (*bufio.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, gzipError("open", err)
		}
		br = bufio.NewReaderSize(gzipErrors{zr}, 64<<10)
	}
	return br, nil
}

// gzipErrors says which layer failed when a gzip stream cannot be read:
// a truncated file otherwise reads as a bare "unexpected EOF". A stream
// cut short or corrupt is a FormatError (the file's fault); an error of
// the reader beneath (a disk's, a connection's) is not.
type gzipErrors struct{ r io.Reader }

func (g gzipErrors) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err != nil && err != io.EOF {
		err = gzipError("read", err)
	}
	return n, err
}

// gzipError is err of reading (or opening) a gzip stream, said as
// gzipErrors says it.
func gzipError(doing string, err error) error {
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &FormatError{Err: fmt.Errorf("%s gzip stream (is the file cut short?): %w", doing, err)}
	case errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || errors.As(err, &corrupt):
		return &FormatError{Err: fmt.Errorf("%s gzip stream (the file is corrupt): %w", doing, err)}
	}
	return fmt.Errorf("%s gzip stream: %w", doing, err)
}

// NewReader returns a Reader of r in the given format. A gzip stream is
// decompressed transparently. A zero format is detected from the content: a
// first non-blank line starting with '{' means JSONL, anything else Text.
func NewReader(r io.Reader, format Format) (*Reader, error) {
	br, err := Decompressed(r)
	if err != nil {
		return nil, err
	}
	if format == 0 {
		format = detect(br)
	}
	return &Reader{br: br, format: format, header: format == Text}, nil
}

func detect(br *bufio.Reader) Format {
	for n := 64; ; n *= 4 {
		head, err := br.Peek(n)
		if t := bytes.TrimLeft(head, " \t\r\n\ufeff"); len(t) > 0 {
			if t[0] == '{' {
				return JSONL
			}
			return Text
		}
		if err != nil || n > 1<<16 {
			return Text
		}
	}
}

// Next returns the next paper. At the end of the corpus it returns io.EOF.
// A malformed record yields a *LineError; the caller may log it and call
// Next again to go on with the following records. Any other error is fatal.
func (r *Reader) Next() (papersearch.Paper, error) {
	if r.format == JSONL {
		return r.nextJSON()
	}
	return r.nextParagraph()
}

// scan reads the next line into r.buf. A line longer than MaxRecordBytes is
// consumed whole and reported as a *LineError, so reading can go on after it.
func (r *Reader) scan() (bool, error) {
	r.buf = r.buf[:0]
	tooLong := false
	for {
		chunk, err := r.br.ReadSlice('\n')
		if !tooLong {
			if len(r.buf)+len(chunk) > MaxRecordBytes+1 {
				tooLong = true
				r.buf = r.buf[:0]
			} else {
				r.buf = append(r.buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return false, fmt.Errorf("read corpus after line %d: %w", r.line, err)
		}
		if errors.Is(err, io.EOF) && len(chunk) == 0 && len(r.buf) == 0 && !tooLong {
			return false, io.EOF
		}
		r.line++
		if tooLong {
			return false, &LineError{Line: r.line, Err: ErrTooLong}
		}
		r.buf = bytes.TrimRight(r.buf, "\r\n")
		return true, nil
	}
}

// jsonRecord is the wire form of a JSONL record (authors and year raw, to
// say what is wrong with them: see decodeYear). BEIR corpora name the id
// "_id" and the abstract "text"; both spellings are read.
type jsonRecord struct {
	ID       string          `json:"id"`
	BEIRID   string          `json:"_id"`
	Text     string          `json:"text"`
	Title    string          `json:"title"`
	Abstract string          `json:"abstract"`
	Authors  json.RawMessage `json:"authors"`
	Venue    string          `json:"venue"`
	Year     json.RawMessage `json:"year"`
	URL      string          `json:"url"`
	Type     string          `json:"type"`
	Tags     []string        `json:"tags"`
}

func (r *Reader) nextJSON() (papersearch.Paper, error) {
	for {
		ok, err := r.scan()
		if !ok {
			return papersearch.Paper{}, err
		}
		line := bytes.TrimSpace(r.buf)
		if len(line) == 0 {
			continue
		}
		p, err := decodeRecord(line)
		if err != nil {
			return papersearch.Paper{}, &LineError{Line: r.line, Err: err}
		}
		return p, nil
	}
}

func decodeRecord(line []byte) (papersearch.Paper, error) {
	if !utf8.Valid(line) {
		return papersearch.Paper{}, papersearch.ErrInvalidUTF8
	}
	var rec jsonRecord
	if err := json.Unmarshal(line, &rec); err != nil {
		return papersearch.Paper{}, fmt.Errorf("invalid JSON: %w", err)
	}
	authors, err := decodeAuthors(rec.Authors)
	if err != nil {
		return papersearch.Paper{}, err
	}
	year, err := decodeYear(rec.Year)
	if err != nil {
		return papersearch.Paper{}, err
	}
	if rec.ID == "" {
		rec.ID = rec.BEIRID
	}
	if rec.Abstract == "" {
		rec.Abstract = rec.Text
	}
	return papersearch.Complete(papersearch.Paper{
		ID:       rec.ID,
		Title:    rec.Title,
		Abstract: rec.Abstract,
		Authors:  authors,
		Venue:    rec.Venue,
		Year:     year,
		URL:      rec.URL,
		Type:     rec.Type,
		Tags:     rec.Tags,
	})
}

// decodeAuthors accepts a list of names or one string of names separated by
// commas or semicolons.
// decodeAuthors and decodeYear read a record's authors and year by the
// rule POST /v1/papers reads them with (its OpenAPI document's): authors a
// list of strings, a year a whole number (2019, 2019.0; not "2019"), null
// or absent for none. One rule for every way a paper comes in.
func decodeAuthors(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("authors must be a list of strings, not %.40s", raw)
	}
	return list, nil
}

func decodeYear(raw json.RawMessage) (int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var y float64
	if err := json.Unmarshal(raw, &y); err != nil || y != math.Trunc(y) || math.Abs(y) > 1e9 {
		return 0, fmt.Errorf("year must be a whole number, not %.40s", raw)
	}
	return int(y), nil // papersearch.Complete checks its range
}

func (r *Reader) nextParagraph() (papersearch.Paper, error) {
	var (
		buf   strings.Builder
		start int
	)
	for {
		ok, err := r.scan()
		var le *LineError
		if errors.As(err, &le) {
			// A line too long to hold spoils its whole paragraph.
			for {
				if ok, _ := r.scan(); !ok || len(bytes.TrimSpace(r.buf)) == 0 {
					break
				}
			}
			return papersearch.Paper{}, err
		}
		if !ok {
			if errors.Is(err, io.EOF) && buf.Len() > 0 {
				break
			}
			return papersearch.Paper{}, err
		}
		text := strings.TrimSpace(string(r.buf))
		if r.header {
			// The first non-blank line names the corpus; it is not an abstract.
			if text != "" {
				r.header = false
			}
			continue
		}
		if text == "" {
			if buf.Len() > 0 {
				break
			}
			continue
		}
		if buf.Len() == 0 {
			start = r.line
		} else {
			buf.WriteByte(' ')
		}
		buf.WriteString(text)
		if buf.Len() > MaxRecordBytes {
			// Skip the rest of the paragraph, then report it.
			for {
				if ok, _ := r.scan(); !ok || len(bytes.TrimSpace(r.buf)) == 0 {
					break
				}
			}
			return papersearch.Paper{}, &LineError{Line: start, Err: ErrTooLong}
		}
	}
	if !utf8.ValidString(buf.String()) {
		return papersearch.Paper{}, &LineError{Line: start, Err: papersearch.ErrInvalidUTF8}
	}
	p, err := papersearch.Complete(papersearch.Paper{Abstract: buf.String()})
	if err != nil {
		return papersearch.Paper{}, &LineError{Line: start, Err: err}
	}
	return p, nil
}
