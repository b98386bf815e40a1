// Package arxiv reads arXiv's metadata: the public snapshot
// (arxiv-metadata-oai-snapshot.json, one JSON record per line, millions of
// lines) streamed in bounded memory.
package arxiv

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
	"github.com/papersearch/papersearch/seeds/latex"
)

// IDPattern is the form of an arXiv identifier, without its version: a
// new-style 2401.01234, or an old-style archive and number, hep-th/9901001
// (math.AG/0601001).
const IDPattern = `(?:[a-z-]+(?:\.[A-Z]{2})?/\d{7}|\d{4}\.\d{4,5})`

// idForm is a snapshot record's id: an identifier, with a version or not.
var idForm = regexp.MustCompile(`^` + IDPattern + `(?:v\d+)?$`) // read-only

// errNotArxiv rejects a record whose id is no arXiv identifier.
var errNotArxiv = errors.New("not an arXiv record")

// maxLine bounds one snapshot record; the longest real ones are a few tens
// of kilobytes.
const maxLine = 4 << 20

// record is the part of a snapshot line that makes a paper.
type record struct {
	ID            string     `json:"id"`
	Title         string     `json:"title"`
	Abstract      string     `json:"abstract"`
	Authors       string     `json:"authors"`
	AuthorsParsed [][]string `json:"authors_parsed"` // [last, first, suffix]
	JournalRef    string     `json:"journal-ref"`
	DOI           string     `json:"doi"`
	Categories    string     `json:"categories"`
	Versions      []struct {
		Created string `json:"created"` // RFC 1123: "Mon, 2 Apr 2007 19:18:42 GMT"
	} `json:"versions"`
	UpdateDate string `json:"update_date"`
}

// SnapshotReader reads papers from the arXiv metadata snapshot, keeping
// those in the categories asked for.
type SnapshotReader struct {
	sc         *bufio.Scanner
	line       int
	categories []string
	// Skipped counts the records outside the categories.
	Skipped int
}

// NewSnapshotReader returns a reader of the snapshot r that keeps records
// with a category starting with one of categories ("cs." keeps every
// computer-science category, "cs.LG" one of them); none keeps all.
func NewSnapshotReader(r io.Reader, categories ...string) *SnapshotReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &SnapshotReader{sc: sc, categories: categories}
}

// categoriesKey finds a record's categories without decoding the rest:
// most lines of a snapshot are outside the categories asked for.
var categoriesKey = []byte(`"categories"`) // read-only

// Next returns the next paper in the categories. A record that cannot be
// read, or has no abstract, yields a *seeds.LineError and reading goes on;
// at the end it returns io.EOF.
func (r *SnapshotReader) Next() (papersearch.Paper, error) {
	for r.sc.Scan() {
		r.line++
		line := bytes.TrimSpace(r.sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if len(r.categories) > 0 && !r.wanted(line) {
			r.Skipped++
			continue
		}
		var rec record
		if err := json.Unmarshal(line, &rec); err != nil {
			return papersearch.Paper{}, &seeds.LineError{Line: r.line, Err: fmt.Errorf("invalid JSON: %w", err)}
		}
		if len(r.categories) > 0 && !r.match(rec.Categories) {
			r.Skipped++
			continue
		}
		p, err := Paper(rec)
		if err != nil {
			return p, &seeds.LineError{Line: r.line, Err: fmt.Errorf("arXiv %s: %w", rec.ID, err)}
		}
		return p, nil
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return papersearch.Paper{}, fmt.Errorf("line %d: a record longer than %d bytes: %w", r.line+1, maxLine, err)
		}
		return papersearch.Paper{}, err
	}
	return papersearch.Paper{}, io.EOF
}

// wanted reports whether the line may be in the categories, looking only
// at its categories' value; a line where that cannot be found quickly is
// decoded and judged by match.
func (r *SnapshotReader) wanted(line []byte) bool {
	i := bytes.Index(line, categoriesKey)
	if i < 0 {
		return true
	}
	rest := bytes.TrimLeft(line[i+len(categoriesKey):], " \t")
	if len(rest) == 0 || rest[0] != ':' {
		return true
	}
	rest = bytes.TrimLeft(rest[1:], " \t")
	if len(rest) == 0 || rest[0] != '"' {
		return true
	}
	rest = rest[1:]
	end := bytes.IndexAny(rest, `"\`)
	if end < 0 || rest[end] != '"' {
		return true
	}
	return r.match(string(rest[:end]))
}

// match reports whether one of the space-separated categories starts with
// a category asked for.
func (r *SnapshotReader) match(categories string) bool {
	for _, c := range strings.Fields(categories) {
		for _, want := range r.categories {
			if strings.HasPrefix(c, want) {
				return true
			}
		}
	}
	return false
}

// oldStyle matches an old arXiv id (hep-th/9901001), whose year is in it.
var oldStyle = regexp.MustCompile(`/(\d{2})\d{5}$`) // read-only

// Paper turns a snapshot record into a paper: id arxiv:<id>, title and
// authors decoded from TeX, the day and year of the first version, the
// journal reference (or "arXiv") as the venue, the abstract page as the
// URL.
func Paper(rec record) (papersearch.Paper, error) {
	if !idForm.MatchString(rec.ID) {
		return papersearch.Paper{}, fmt.Errorf("%w: %q is not an arXiv identifier (2401.01234, or hep-th/9901001 before 2007): is this arXiv's metadata snapshot?", errNotArxiv, rec.ID)
	}
	p := papersearch.Paper{
		ID:       "arxiv:" + rec.ID,
		Title:    latex.Decode(rec.Title),
		Abstract: strings.Join(strings.Fields(rec.Abstract), " "),
		Venue:    strings.TrimSpace(rec.JournalRef),
		Year:     year(rec),
		URL:      "https://arxiv.org/abs/" + rec.ID,
	}
	if t, ok := firstVersion(rec); ok {
		p.Date = t.Format(time.DateOnly)
	}
	if p.Venue == "" { // with a journal reference, what was published there is of a kind it does not say
		p.Venue, p.Type = "arXiv", papersearch.TypePreprint
	}
	for _, a := range rec.AuthorsParsed {
		// [last, first, suffix] is written "first last suffix".
		var last, first, suffix string
		switch len(a) {
		case 0:
			continue
		case 1:
			last = a[0]
		case 2:
			last, first = a[0], a[1]
		default:
			last, first, suffix = a[0], a[1], a[2]
		}
		p.Authors = append(p.Authors, latex.Decode(first+" "+last+" "+suffix))
	}
	if len(p.Authors) == 0 && rec.Authors != "" {
		for _, a := range strings.Split(rec.Authors, ",") {
			p.Authors = append(p.Authors, latex.Decode(strings.TrimPrefix(strings.TrimSpace(a), "and ")))
		}
	}
	if !papersearch.ValidURL(p.URL) {
		p.URL = ""
	}
	return papersearch.Complete(seeds.WithSources(p, rec.DOI, rec.ID))
}

// firstVersion is when the record's first version was submitted (UTC).
// The snapshot writes its days unpadded ("Mon, 2 Apr 2007 19:18:42 GMT"),
// which RFC 1123's layout does not read.
func firstVersion(rec record) (time.Time, bool) {
	if len(rec.Versions) == 0 {
		return time.Time{}, false
	}
	t, err := time.Parse("Mon, 2 Jan 2006 15:04:05 MST", strings.TrimSpace(rec.Versions[0].Created))
	return t.UTC(), err == nil
}

// year is the year of the first version, else of the id (2401.01234 is
// January 2024; hep-th/9901001 January 1999), else of the last update.
func year(rec record) int {
	if t, ok := firstVersion(rec); ok {
		return t.Year()
	}
	yy := -1
	if len(rec.ID) > 4 && rec.ID[4] == '.' {
		fmt.Sscanf(rec.ID[:2], "%d", &yy)
	} else if m := oldStyle.FindStringSubmatch(rec.ID); m != nil {
		fmt.Sscanf(m[1], "%d", &yy)
	}
	switch {
	case yy >= 91:
		return 1900 + yy
	case yy >= 0:
		return 2000 + yy
	}
	var y int
	if len(rec.UpdateDate) >= 4 {
		fmt.Sscanf(rec.UpdateDate[:4], "%d", &y)
	}
	return y
}
