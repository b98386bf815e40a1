package api

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/seeds/bibtex"
)

// Export media types the search and similar endpoints honour in Accept.
const (
	MediaCSV    = "text/csv"
	MediaNDJSON = "application/x-ndjson"
	MediaBibTeX = "application/x-bibtex"
)

// exportType returns the export format of formats (as many of MediaCSV,
// MediaNDJSON and MediaBibTeX as the route produces) the Accept header
// prefers, or "" for JSON, by RFC 9110's rules (section 12.5.1): each
// format takes the quality of the most specific media range that names
// it (type/subtype, then type/*, then */*; application/problem+json
// counts as JSON), q=0 rules it out, the highest quality wins, and of
// equals the one whose range is listed first, then JSON. When nothing
// the route produces is acceptable it answers JSON, as RFC 9110 allows,
// rather than 406: a client that lists no type it can read still gets
// a body it can report.
func exportType(accept string, formats ...string) string {
	type rng struct {
		typ, sub string
		q        float64
	}
	var ranges []rng
	for part := range strings.SplitSeq(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(v, 64); err != nil || q < 0 || q > 1 {
				continue // not a quality RFC 9110 allows: the range is ignored
			}
		}
		typ, sub, _ := strings.Cut(mt, "/")
		ranges = append(ranges, rng{typ, sub, q})
	}
	if len(ranges) == 0 {
		return ""
	}
	// quality returns media type mt's quality and the position of the
	// range that gives it, -1 for none.
	quality := func(mt string) (float64, int) {
		typ, sub, _ := strings.Cut(mt, "/")
		q, at, spec := 0.0, -1, -1
		for i, r := range ranges {
			s := -1
			switch {
			case r.typ == typ && (r.sub == sub || mt == "application/json" && r.sub == "problem+json"):
				s = 2
			case r.typ == typ && r.sub == "*":
				s = 1
			case r.typ == "*" && r.sub == "*":
				s = 0
			}
			if s > spec {
				q, at, spec = r.q, i, s
			}
		}
		return q, at
	}
	best, bestQ, bestAt := "", 0.0, -1
	for i, mt := range append([]string{"application/json"}, formats...) {
		q, at := quality(mt)
		if q > bestQ || q == bestQ && q > 0 && at < bestAt {
			best, bestQ, bestAt = mt, q, at
			if i == 0 {
				best = ""
			}
		}
	}
	return best
}

// respond writes results as JSON or in the export format the client asked for.
func respond(c echo.Context, res search.Results) error {
	// The body differs by Accept, JSON's too: a cache must not answer a
	// request for CSV with the JSON it kept.
	c.Response().Header().Add("Vary", echo.HeaderAccept)
	mt := exportType(c.Request().Header.Get(echo.HeaderAccept), MediaCSV, MediaNDJSON, MediaBibTeX)
	resp := NewSearchResponse(res)
	var (
		body []byte
		err  error
	)
	switch mt {
	case MediaCSV:
		body, err = exportCSV(resp.Results)
	case MediaNDJSON:
		body, err = exportNDJSON(resp.Results)
	case MediaBibTeX:
		body = []byte(BibTeX(resp.Results))
	default:
		return c.JSON(http.StatusOK, resp)
	}
	if err != nil {
		return err
	}
	h := c.Response().Header()
	if resp.NextCursor != nil {
		h.Set("X-Next-Cursor", *resp.NextCursor)
	}
	if mt == MediaCSV || mt == MediaBibTeX {
		mt += "; charset=utf-8"
	}
	return c.Blob(http.StatusOK, mt, body)
}

// NewSearchResponse is the JSON body the API returns for res.
func NewSearchResponse(res search.Results) wire.SearchResponse {
	hits := res.Hits
	if hits == nil {
		hits = []papersearch.Hit{}
	}
	for i := range hits {
		if hits[i].Paper.Authors == nil {
			hits[i].Paper.Authors = []string{}
		}
	}
	out := wire.SearchResponse{Results: hits, Index: res.Index, Degraded: res.Degraded, Evidence: res.Evidence,
		TookMS: float64(res.Took.Microseconds()) / 1000}
	if out.Degraded == nil {
		out.Degraded = []string{}
	}
	if res.NextCursor != "" {
		out.NextCursor = &res.NextCursor
	}
	return out
}

// exportCSV writes one row per result with a header row.
func exportCSV(hits []papersearch.Hit) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"rank", "id", "score", "title", "authors", "venue", "year", "url", "abstract", "date", "added"})
	for _, h := range hits {
		year, added := "", ""
		if h.Paper.Year != 0 {
			year = strconv.Itoa(h.Paper.Year)
		}
		if !h.Paper.Added.IsZero() {
			added = h.Paper.Added.Format(time.RFC3339)
		}
		w.Write([]string{strconv.Itoa(h.Rank), csvText(h.ID), strconv.FormatFloat(h.Score, 'f', 6, 64), csvText(h.Paper.Title),
			csvText(strings.Join(h.Paper.Authors, "; ")), csvText(h.Paper.Venue), year, csvText(h.Paper.URL), csvText(h.Paper.Abstract),
			h.Paper.Date, added})
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

// csvText writes a text cell without control characters, and neutralises
// one that a spreadsheet would run as a formula, as OWASP's CSV injection
// guidance says: a cell starting with =, +, -, @ or a tab gets a leading
// apostrophe, which spreadsheets show as text and do not display. (Numeric cells, rank,
// score and year, are written by the service and left as numbers.)
func csvText(s string) string {
	s = papersearch.StripControls(s) // a paper stored before Complete removed them
	if s != "" && strings.ContainsRune("=+-@\t", rune(s[0])) {
		return "'" + s
	}
	return s
}

// exportNDJSON writes one JSON result per line.
func exportNDJSON(hits []papersearch.Hit) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, h := range hits {
		if err := enc.Encode(h); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// BibTeX renders results as BibTeX entries (bibtex.Format), one after
// another.
func BibTeX(hits []papersearch.Hit) string {
	var b strings.Builder
	for i, h := range hits {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(bibtex.Format(h.Paper))
	}
	return b.String()
}
