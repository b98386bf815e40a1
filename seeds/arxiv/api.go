package arxiv

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
	"github.com/papersearch/papersearch/seeds/fetch"
	"github.com/papersearch/papersearch/seeds/latex"
)

// DefaultAPIURL is arXiv's query API.
const DefaultAPIURL = "https://export.arxiv.org/api/query"

// RequestSpacing is the time arXiv asks clients to leave between requests.
const RequestSpacing = 3 * time.Second

// APIPageSize is the entries asked for per request.
const APIPageSize = 200

// feed is the part of arXiv's Atom answer that makes papers. encoding/xml
// reads it, arXiv's own elements (doi, journal_ref) by their namespace.
type feed struct {
	Total   int     `xml:"http://a9.com/-/spec/opensearch/1.1/ totalResults"`
	Entries []entry `xml:"http://www.w3.org/2005/Atom entry"`
}

type entry struct {
	ID        string `xml:"http://www.w3.org/2005/Atom id"` // http://arxiv.org/abs/2401.01234v1
	Published string `xml:"http://www.w3.org/2005/Atom published"`
	Title     string `xml:"http://www.w3.org/2005/Atom title"`
	Summary   string `xml:"http://www.w3.org/2005/Atom summary"`
	Authors   []struct {
		Name string `xml:"http://www.w3.org/2005/Atom name"`
	} `xml:"http://www.w3.org/2005/Atom author"`
	JournalRef string `xml:"http://arxiv.org/schemas/atom journal_ref"`
	DOI        string `xml:"http://arxiv.org/schemas/atom doi"`
}

// APIReader yields the papers an arXiv API query finds, newest first, up
// to a maximum, page by page with arXiv's request spacing.
type APIReader struct {
	ctx    context.Context // the import's, for the requests Next makes
	client *fetch.Client
	base   string
	query  string
	limit  int
	start  int                // entries asked for so far
	total  int                // what arXiv says the query finds; -1 before the first page
	pages  fetch.Pager[entry] // Read: the entries handed out so far
}

// NewAPIReader returns a reader of the first limit papers (newest first) the
// search query finds ("cat:cs.LG AND ti:diffusion", arXiv's query syntax)
// at the API at base (DefaultAPIURL when ""). The client should space
// requests by RequestSpacing. Next makes its requests under ctx.
func NewAPIReader(ctx context.Context, client *fetch.Client, base, query string, limit int) *APIReader {
	if base == "" {
		base = DefaultAPIURL
	}
	r := &APIReader{ctx: ctx, client: client, base: base, query: query, limit: limit, total: -1}
	r.pages.More = r.fetch
	r.pages.End = func() bool { return r.start >= r.limit || r.total >= 0 && r.start >= r.total }
	return r
}

// Next returns the next paper; an entry without an abstract yields a
// *seeds.LineError whose Line is the entry's position in the results; at
// the end it returns io.EOF.
func (r *APIReader) Next() (papersearch.Paper, error) {
	e, at, err := r.pages.Next()
	if err != nil {
		return papersearch.Paper{}, err
	}
	p, err := apiPaper(e)
	if err != nil {
		return p, &seeds.LineError{Line: at, Err: fmt.Errorf("arXiv %s: %w", e.ID, err)}
	}
	return p, nil
}

// Position is where the reader stands: the entries handed out so far. A
// reader of the same query moved there with Seek goes on with the next.
func (r *APIReader) Position() string { return r.pages.Position() }

// Seek moves a reader that has read nothing yet to a Position, so its first
// request asks for the results from there.
func (r *APIReader) Seek(pos string) error {
	if r.start > 0 {
		return fmt.Errorf("arXiv query %q: cannot resume at %q: it has read", r.query, pos)
	}
	n, err := r.pages.Seek(pos)
	if err != nil {
		return fmt.Errorf("arXiv query %q: %w", r.query, err)
	}
	r.start = n
	return nil
}

func (r *APIReader) fetch() ([]entry, error) {
	n := min(APIPageSize, r.limit-r.start)
	q := url.Values{"search_query": {r.query}, "start": {strconv.Itoa(r.start)}, "max_results": {strconv.Itoa(n)},
		"sortBy": {"submittedDate"}, "sortOrder": {"descending"}}
	var f feed
	err := r.client.Get(r.ctx, r.base+"?"+q.Encode(), func(body io.Reader) error {
		return xml.NewDecoder(body).Decode(&f)
	})
	if err != nil {
		return nil, fmt.Errorf("arXiv query %q, results from %d: %w", r.query, r.start, err)
	}
	r.total = f.Total
	r.start += n
	return f.Entries, nil
}

// absID takes the arXiv id out of an entry's id URL, without its version.
var absID = regexp.MustCompile(`arxiv\.org/abs/(.+?)(?:v\d+)?$`) // read-only

// apiPaper turns an API entry into a paper: id arxiv:<id>, title and
// authors decoded from TeX, the year of first publication, the journal
// reference (or "arXiv") as the venue, the abstract page as the URL.
func apiPaper(e entry) (papersearch.Paper, error) {
	m := absID.FindStringSubmatch(strings.TrimSpace(e.ID))
	if m == nil {
		return papersearch.Paper{}, fmt.Errorf("entry id %q is not an arXiv abstract page", e.ID)
	}
	p := papersearch.Paper{
		ID:       "arxiv:" + m[1],
		Title:    latex.Decode(e.Title),
		Abstract: strings.Join(strings.Fields(e.Summary), " "),
		Venue:    strings.TrimSpace(e.JournalRef),
		URL:      "https://arxiv.org/abs/" + m[1],
	}
	if p.Venue == "" { // with a journal reference, what was published there is of a kind it does not say
		p.Venue, p.Type = "arXiv", papersearch.TypePreprint
	}
	if t, err := time.Parse(time.RFC3339, strings.TrimSpace(e.Published)); err == nil {
		p.Year, p.Date = t.Year(), t.UTC().Format(time.DateOnly) // its first version's
	}
	for _, a := range e.Authors {
		p.Authors = append(p.Authors, strings.TrimSpace(a.Name))
	}
	if !papersearch.ValidURL(p.URL) {
		p.URL = ""
	}
	return papersearch.Complete(seeds.WithSources(p, e.DOI, m[1]))
}

// Since narrows an API query to the papers first submitted on or after
// day (YYYY-MM-DD, UTC), by arXiv's submittedDate range: what a watch of
// the query asks for on its next run.
func Since(query, day string) string {
	return "(" + query + ") AND submittedDate:[" + strings.ReplaceAll(day, "-", "") + "0000 TO 999912312359]"
}
