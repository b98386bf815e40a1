// Package openalex reads works from the OpenAlex API by filter, with
// cursor paging, rebuilding each abstract from its inverted index.
package openalex

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
	"github.com/papersearch/papersearch/seeds/fetch"
)

// DefaultBaseURL is the OpenAlex API.
const DefaultBaseURL = "https://api.openalex.org"

// PageSize is the works asked for per request (OpenAlex's maximum).
const PageSize = 200

// work is the part of an OpenAlex work that makes a paper.
type work struct {
	ID              string `json:"id"`  // https://openalex.org/W2741809807
	DOI             string `json:"doi"` // https://doi.org/10.…, or null
	Title           string `json:"title"`
	DisplayName     string `json:"display_name"`
	PublicationYear int    `json:"publication_year"`
	PublicationDate string `json:"publication_date"` // 2026-03-14
	// Type is the kind of work ("article", "preprint", "book-chapter",
	// "dissertation", …).
	Type        string           `json:"type"`
	Abstract    map[string][]int `json:"abstract_inverted_index"`
	Authorships []struct {
		Author struct {
			DisplayName string `json:"display_name"`
		} `json:"author"`
	} `json:"authorships"`
	PrimaryLocation struct {
		Source struct {
			DisplayName string `json:"display_name"`
			// Type is the kind of source: "journal", "conference",
			// "repository" (a preprint server), "book series", ….
			Type string `json:"type"`
		} `json:"source"`
		LandingPageURL string `json:"landing_page_url"`
	} `json:"primary_location"`
	// Locations are every place the work is found; an arXiv abstract page
	// among them names its preprint.
	Locations []struct {
		LandingPageURL string `json:"landing_page_url"`
	} `json:"locations"`
}

// typeOf is the paper type of a work: from the work's type, and for an
// article from the type of the source it is published in.
func typeOf(w work) string {
	switch w.Type {
	case "preprint":
		return papersearch.TypePreprint
	case "book-chapter":
		return papersearch.TypeBookChapter
	case "book", "monograph":
		return papersearch.TypeBook
	case "dissertation":
		return papersearch.TypeThesis
	case "report":
		return papersearch.TypeReport
	case "article":
		switch w.PrimaryLocation.Source.Type {
		case "journal":
			return papersearch.TypeJournalArticle
		case "conference":
			return papersearch.TypeProceedingsArticle
		case "repository":
			return papersearch.TypePreprint
		}
	}
	return ""
}

// arxivPage takes the arXiv id, without version, out of an abstract page.
var arxivPage = regexp.MustCompile(`^https?://(?:www\.)?arxiv\.org/abs/([^?#]+?)(?:v\d+)?$`) // read-only

// arxivID returns the id of the work's arXiv version, "" when it lists none.
func (w work) arxivID() string {
	for _, l := range w.Locations {
		if m := arxivPage.FindStringSubmatch(strings.TrimSpace(l.LandingPageURL)); m != nil {
			return m[1]
		}
	}
	return ""
}

type page struct {
	Meta struct {
		Count      int     `json:"count"`
		NextCursor *string `json:"next_cursor"`
	} `json:"meta"`
	Results []json.RawMessage `json:"results"`
}

// Reader yields the works an OpenAlex filter finds, up to a maximum.
type Reader struct {
	ctx    context.Context // the import's, for the requests Next makes
	client *fetch.Client
	base   string
	filter string
	email  string
	limit  int
	cursor string // of the next page; "" once the last page is read
	pages  fetch.Pager[json.RawMessage]
	// page is the cursor the pending works were asked for with, and
	// paged how many that page held; skip is how many of the next page
	// fetched to drop (the works a resumed reader handed out before).
	page        string
	paged, skip int
}

// NewReader returns a reader of the first limit works the filter finds
// ("concepts.id:C154945302,publication_year:2026", OpenAlex's filter
// syntax) at the API at base (DefaultBaseURL when ""). email, if set, is
// sent as mailto, which puts the requests in OpenAlex's polite pool. Next
// makes its requests under ctx.
func NewReader(ctx context.Context, client *fetch.Client, base, filter, email string, limit int) *Reader {
	if base == "" {
		base = DefaultBaseURL
	}
	r := &Reader{ctx: ctx, client: client, base: strings.TrimSuffix(base, "/"), filter: filter, email: email,
		limit: limit, cursor: "*"}
	r.pages.More, r.pages.End, r.pages.Limit = r.fetch, func() bool { return r.cursor == "" }, limit
	return r
}

// Next returns the next paper; a work without an abstract yields a
// *seeds.LineError whose Line is the work's position in the results; at
// the end it returns io.EOF.
func (r *Reader) Next() (papersearch.Paper, error) {
	raw, at, err := r.pages.Next()
	if err != nil {
		return papersearch.Paper{}, err
	}
	var w work
	if err := json.Unmarshal(raw, &w); err != nil {
		return papersearch.Paper{}, &seeds.LineError{Line: at, Err: fmt.Errorf("OpenAlex work: %w", err)}
	}
	p, err := Paper(w)
	if err != nil {
		return p, &seeds.LineError{Line: at, Err: fmt.Errorf("OpenAlex %s: %w", w.ID, err)}
	}
	return p, nil
}

// Position is where the reader stands: the works handed out so far, and
// the page they end in (its cursor and how many of it were handed out). A
// reader of the same filter moved there with Seek asks for that page once
// more and goes on after those works.
func (r *Reader) Position() string {
	if r.pages.Pending() == 0 { // between pages: the next one starts afresh
		return fmt.Sprintf("%d 0 %s", r.pages.Read, r.cursor)
	}
	return fmt.Sprintf("%d %d %s", r.pages.Read, r.paged-r.pages.Pending(), r.page)
}

// Seek moves a reader that has read nothing yet to a Position.
func (r *Reader) Seek(pos string) error {
	var read, skip int
	var cursor string
	n, _ := fmt.Sscanf(pos, "%d %d %s", &read, &skip, &cursor)
	if n < 2 || read < 0 || skip < 0 || r.pages.Read > 0 || r.page != "" {
		return fmt.Errorf("OpenAlex filter %q: cannot resume at %q", r.filter, pos)
	}
	r.pages.Read, r.skip, r.cursor = read, skip, cursor // no cursor: the results were all read
	return nil
}

func (r *Reader) fetch() ([]json.RawMessage, error) {
	q := url.Values{"filter": {r.filter}, "per-page": {strconv.Itoa(PageSize)}, "cursor": {r.cursor}}
	if r.email != "" {
		q.Set("mailto", r.email)
	}
	var pg page
	err := r.client.GetJSON(r.ctx, r.base+"/works?"+q.Encode(), &pg)
	if err != nil {
		return nil, fmt.Errorf("OpenAlex filter %q, works from %d: %w", r.filter, r.pages.Read, err)
	}
	r.page, r.paged = r.cursor, len(pg.Results)
	works := pg.Results[min(r.skip, len(pg.Results)):]
	r.skip = 0
	r.cursor = ""
	if pg.Meta.NextCursor != nil && len(pg.Results) > 0 {
		r.cursor = *pg.Meta.NextCursor
	}
	if len(works) == 0 && r.cursor != "" {
		return r.fetch() // a resumed reader handed out the whole page before
	}
	return works, nil
}

// Abstract rebuilds an abstract from OpenAlex's inverted index: each word
// with the positions it holds.
func Abstract(index map[string][]int) string {
	type placed struct {
		at   int
		word string
	}
	var words []placed
	for w, positions := range index {
		for _, at := range positions {
			words = append(words, placed{at, w})
		}
	}
	sort.Slice(words, func(i, j int) bool { return words[i].at < words[j].at })
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w.word
	}
	return strings.Join(out, " ")
}

// Paper turns a work into a paper: id doi:<DOI> when it has one, else
// arxiv:<id> when an arXiv abstract page is among its locations, else
// openalex:<W id>; the abstract rebuilt; the primary source as the venue;
// the type from the work's and the source's (typeOf);
// the work's OpenAlex page, DOI and arXiv id among its sources.
func Paper(w work) (papersearch.Paper, error) {
	p := papersearch.Paper{
		Title:    w.Title,
		Abstract: Abstract(w.Abstract),
		Venue:    w.PrimaryLocation.Source.DisplayName,
		Year:     w.PublicationYear,
		URL:      w.PrimaryLocation.LandingPageURL,
		Type:     typeOf(w),
	}
	if _, _, ok := papersearch.ParseDate(w.PublicationDate); ok {
		p.Date = w.PublicationDate
	}
	if p.Title == "" {
		p.Title = w.DisplayName
	}
	for _, a := range w.Authorships {
		p.Authors = append(p.Authors, a.Author.DisplayName)
	}
	own := strings.TrimPrefix(w.ID, "https://openalex.org/")
	p.Sources = []papersearch.Source{{ID: "openalex:" + own, URL: "https://openalex.org/" + own}}
	p = seeds.Identify(p, w.DOI, w.arxivID(), "openalex:"+own)
	return papersearch.Complete(p)
}

// Since narrows a filter to the works published on or after day
// (YYYY-MM-DD), by OpenAlex's from_publication_date: what a watch of the
// filter asks for on its next run. (from_created_date, the day OpenAlex
// added a work, needs a paid key.)
func Since(filter, day string) string {
	if filter == "" {
		return "from_publication_date:" + day
	}
	return filter + ",from_publication_date:" + day
}
