package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"github.com/labstack/echo/v4"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search"
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
	resp := NewSearchResponse(res)
	var (
		body []byte
		err  error
	)
	switch mt := exportType(c.Request().Header.Get(echo.HeaderAccept)); mt {
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
	h.Set("Vary", echo.HeaderAccept)
	ct := exportType(c.Request().Header.Get(echo.HeaderAccept))
	if ct == MediaCSV || ct == MediaBibTeX {
		ct += "; charset=utf-8"
	}
	return c.Blob(http.StatusOK, ct, body)
}

// exportCSV writes one row per result with a header row.
func exportCSV(hits []papersearch.Hit) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"rank", "id", "score", "title", "authors", "venue", "year", "url", "abstract"})
	for _, h := range hits {
		year := ""
		if h.Paper.Year != 0 {
			year = strconv.Itoa(h.Paper.Year)
		}
		w.Write([]string{strconv.Itoa(h.Rank), h.ID, strconv.FormatFloat(h.Score, 'f', 6, 64), h.Paper.Title,
			strings.Join(h.Paper.Authors, "; "), h.Paper.Venue, year, h.Paper.URL, h.Paper.Abstract})
	}
	w.Flush()
	return b.Bytes(), w.Error()
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

// BibTeX renders results as BibTeX entries: @inproceedings when the paper
// has a venue, @misc otherwise, each under its citation key.
func BibTeX(hits []papersearch.Hit) string {
	var b strings.Builder
	for _, h := range hits {
		p := h.Paper
		kind := "misc"
		if p.Venue != "" {
			kind = "inproceedings"
		}
		fmt.Fprintf(&b, "@%s{%s,\n", kind, CitationKey(p))
		field := func(name, value string) {
			if value != "" {
				fmt.Fprintf(&b, "  %s = {%s},\n", name, value)
			}
		}
		field("title", "{"+bibEscape(p.Title)+"}") // double braces keep its capitals
		authors := make([]string, len(p.Authors))
		for i, a := range p.Authors {
			authors[i] = bibEscape(a)
		}
		field("author", strings.Join(authors, " and "))
		field("booktitle", bibEscape(p.Venue))
		if p.Year != 0 {
			field("year", strconv.Itoa(p.Year))
		}
		field("url", p.URL)
		field("abstract", bibEscape(p.Abstract))
		field("note", "papersearch id: "+bibEscape(p.ID))
		b.WriteString("}\n\n")
	}
	return b.String()
}

// CitationKey is a paper's BibTeX key: the first author's last name, the
// year, the first significant title word, and 4 hex digits of the id's
// hash, so it is readable and the same for the same paper every time.
func CitationKey(p papersearch.Paper) string {
	name := "anon"
	if len(p.Authors) > 0 {
		parts := strings.Fields(p.Authors[0])
		name = parts[len(parts)-1]
	}
	word := ""
	for _, w := range strings.Fields(p.Title) {
		w = keyPart(w)
		if len(w) > 3 {
			word = w
			break
		}
	}
	sum := sha256.Sum256([]byte(p.ID))
	key := keyPart(name)
	if p.Year != 0 {
		key += strconv.Itoa(p.Year)
	}
	return key + word + "_" + hex.EncodeToString(sum[:2])
}

// keyPart keeps the ASCII letters and digits of s, lower-cased.
func keyPart(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// bibEscape escapes the characters that are special in BibTeX field values.
func bibEscape(s string) string {
	r := strings.NewReplacer(`\`, `\textbackslash{}`, `{`, `\{`, `}`, `\}`, `&`, `\&`, `%`, `\%`, `$`, `\$`,
		`#`, `\#`, `_`, `\_`, `~`, `\textasciitilde{}`, `^`, `\textasciicircum{}`)
	return r.Replace(s)
}
