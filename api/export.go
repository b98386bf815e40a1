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

// exportType returns the export format the Accept header asks for, or ""
// for JSON. The first listed type papersearch can produce wins.
func exportType(accept string) string {
	for _, part := range strings.Split(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case MediaCSV, MediaNDJSON, MediaBibTeX:
			return mt
		case "application/json", "application/problem+json", "*/*", "application/*":
			return ""
		}
	}
	return ""
}

// respond writes results as JSON or in the export format the client asked for.
func respond(c echo.Context, res search.Results) error {
	// The body differs by Accept, JSON's too: a cache must not answer a
	// request for CSV with the JSON it kept.
	c.Response().Header().Add("Vary", echo.HeaderAccept)
	mt := exportType(c.Request().Header.Get(echo.HeaderAccept))
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
