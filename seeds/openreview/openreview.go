// Package openreview reads the accepted papers of a venue from the
// OpenReview API (version 2), page by page.
package openreview

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
	"github.com/papersearch/papersearch/seeds/fetch"
)

// DefaultBaseURL is the OpenReview API v2.
const DefaultBaseURL = "https://api2.openreview.net"

// PageSize is the notes asked for per request (OpenReview's maximum is 1000).
const PageSize = 1000

// note is the part of an OpenReview v2 note that makes a paper: every
// content field is an object with a value.
type note struct {
	ID      string `json:"id"`
	Forum   string `json:"forum"`
	PDate   int64  `json:"pdate"` // publication date, ms since the epoch
	CDate   int64  `json:"cdate"`
	Content struct {
		Title    value[string]   `json:"title"`
		Abstract value[string]   `json:"abstract"`
		Authors  value[[]string] `json:"authors"`
		Venue    value[string]   `json:"venue"`
	} `json:"content"`
}

type value[T any] struct {
	Value T `json:"value"`
}

// page is one answer of GET /notes.
type page struct {
	Notes []json.RawMessage `json:"notes"`
	Count int               `json:"count"`
}

// Reader yields the accepted papers of one venue.
type Reader struct {
	ctx     context.Context // the import's, for the requests Next makes
	client  *fetch.Client
	base    string
	venueID string
	pages   fetch.Pager[json.RawMessage] // Read is the offset of the next page
	done    bool
}

// NewReader returns a reader of the papers accepted at venueID
// ("NeurIPS.cc/2026/Conference": OpenReview gives accepted papers that
// venue id, rejected and withdrawn ones another) from the API at base
// (DefaultBaseURL when ""). Next makes its requests under ctx.
func NewReader(ctx context.Context, client *fetch.Client, base, venueID string) *Reader {
	if base == "" {
		base = DefaultBaseURL
	}
	r := &Reader{ctx: ctx, client: client, base: strings.TrimSuffix(base, "/"), venueID: venueID}
	r.pages.More, r.pages.End = r.fetch, func() bool { return r.done }
	return r
}

// Next returns the next paper; a note without an abstract or that cannot be
// read yields a *seeds.LineError whose Line is the note's position in the
// venue (1-based); at the end it returns io.EOF.
func (r *Reader) Next() (papersearch.Paper, error) {
	raw, at, err := r.pages.Next()
	if err != nil {
		return papersearch.Paper{}, err
	}
	var n note
	if err := json.Unmarshal(raw, &n); err != nil {
		return papersearch.Paper{}, &seeds.LineError{Line: at, Err: fmt.Errorf("OpenReview note: %w", err)}
	}
	p, err := Paper(n, r.venueID)
	if err != nil {
		return p, &seeds.LineError{Line: at, Err: fmt.Errorf("OpenReview note %s: %w", n.ID, err)}
	}
	return p, nil
}

// Position is where the reader stands: the notes handed out so far. A
// reader of the same venue moved there with Seek goes on with the next.
func (r *Reader) Position() string { return r.pages.Position() }

// Seek moves a reader that has read nothing yet to a Position, so its first
// request asks for the notes from there.
func (r *Reader) Seek(pos string) error {
	if r.done {
		return fmt.Errorf("OpenReview %s: cannot resume at %q: it has read", r.venueID, pos)
	}
	if _, err := r.pages.Seek(pos); err != nil {
		return fmt.Errorf("OpenReview %s: %w", r.venueID, err)
	}
	return nil
}

// fetch reads the page after the notes handed out.
func (r *Reader) fetch() ([]json.RawMessage, error) {
	offset := r.pages.Read
	q := url.Values{"content.venueid": {r.venueID}, "limit": {strconv.Itoa(PageSize)}, "offset": {strconv.Itoa(offset)}}
	var pg page
	err := r.client.GetJSON(r.ctx, r.base+"/notes?"+q.Encode(), &pg)
	if err != nil {
		return nil, fmt.Errorf("OpenReview %s, notes from %d: %w", r.venueID, offset, err)
	}
	r.done = len(pg.Notes) < PageSize || pg.Count > 0 && offset+len(pg.Notes) >= pg.Count
	return pg.Notes, nil
}

// venueForm reads a venue id: "NeurIPS.cc/2026/Conference".
var venueForm = regexp.MustCompile(`^([A-Za-z0-9-]+)\.[a-z]+/(\d{4})/`) // read-only

// Venue returns the venue's name and year from its id ("NeurIPS", 2026),
// or the id and 0 when it has another form.
func Venue(venueID string) (string, int) {
	m := venueForm.FindStringSubmatch(venueID)
	if m == nil {
		return venueID, 0
	}
	y, _ := strconv.Atoi(m[2])
	return m[1], y
}

// DefaultTag is the tag a venue's papers get: "neurips-2026".
func DefaultTag(venueID string) string {
	name, year := Venue(venueID)
	if year == 0 {
		return ""
	}
	return strings.ToLower(name) + "-" + strconv.Itoa(year)
}

// Paper turns a note into a paper: id openreview:<note id>, the venue's
// name and year (the year of publication when the id has none), the day of
// publication as its date, the forum page as the URL.
func Paper(n note, venueID string) (papersearch.Paper, error) {
	name, year := Venue(venueID)
	if year == 0 && n.PDate > 0 {
		year = time.UnixMilli(n.PDate).UTC().Year()
	}
	forum := n.Forum
	if forum == "" {
		forum = n.ID
	}
	p := papersearch.Paper{
		ID:       "openreview:" + n.ID,
		Title:    n.Content.Title.Value,
		Abstract: n.Content.Abstract.Value,
		Authors:  n.Content.Authors.Value,
		Venue:    name,
		Year:     year,
		URL:      "https://openreview.net/forum?id=" + url.QueryEscape(forum),
	}
	if n.PDate > 0 { // the day it was published on OpenReview
		p.Date = time.UnixMilli(n.PDate).UTC().Format(time.DateOnly)
	}
	if !papersearch.ValidURL(p.URL) {
		p.URL = ""
	}
	p.Sources = []papersearch.Source{{ID: p.ID, URL: p.URL}}
	return papersearch.Complete(p)
}
