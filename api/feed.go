package api

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/search"
)

// Feeds: Atom 1.0 (RFC 4287) documents of the papers added within a
// window that fit a collection or a saved search, newest first. Each entry
// says why it is there, and keeps its id from one reading to the next.

// MediaAtom is the media type of a feed.
const MediaAtom = "application/atom+xml"

// Limits of a feed.
const (
	// DefaultFeedWindow is how far back a feed reaches when not told (a
	// papersearch period).
	DefaultFeedWindow = "7d"
	// DefaultFeedLimit and MaxFeedLimit bound a feed's entries.
	DefaultFeedLimit = 20
	MaxFeedLimit     = 100
)

// feedNamespace is the name space of the UUIDs (version 5) naming feeds
// and their entries: the same feed and paper always make the same id.
var feedNamespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://papersearch.dev/feeds")) // read-only

// feedSpec is what a feed lists: the papers added within Window that fit
// Query (a search) or Tag (a collection's recommendations) within Filter,
// at most Limit of them.
type feedSpec struct {
	// Key names the feed for its ids ("collection:ml", "alert:<id>").
	Key    string
	Title  string
	Query  string
	Tag    string
	Method search.RecommendMethod
	Filter papersearch.Filter
	Window time.Duration
	Limit  int
	// Saved: an alert's feed, which lists nothing (rather than failing)
	// while no paper holds its collection.
	Saved bool
}

// feedHits returns the papers of a feed, newest first: the Limit that fit
// best among those added within the window, each with why (an
// explanation, or the members it is near).
func (s *Server) feedHits(ctx context.Context, spec feedSpec, now time.Time) ([]papersearch.Hit, error) {
	f := spec.Filter
	f.Since, f.Until, f.By = papersearch.Bound(now.Add(-spec.Window).UTC().Format(time.RFC3339)), "", papersearch.ByAdded
	var (
		res search.Results
		err error
	)
	if spec.Tag != "" {
		res, err = s.engine.Recommend(ctx, search.RecommendQuery{Tag: spec.Tag, Filter: f, Limit: spec.Limit, Method: spec.Method})
		if errors.Is(err, search.ErrEmptyCollection) && spec.Saved {
			return nil, nil
		}
	} else {
		// The best of what is new need not answer the search: the papers
		// under the relevance floor are left out, and the next ones
		// ranked above it take their places.
		res, err = s.engine.Search(ctx, search.Query{Text: spec.Query, Filter: f, Limit: search.MaxLimit, Explain: true})
		if floor, ok := s.engine.RelevanceFloor(res); err == nil && ok {
			res.Hits = slices.DeleteFunc(res.Hits, func(h papersearch.Hit) bool { return !search.AboveFloor(h, floor) })
		}
		res.Hits = res.Hits[:min(len(res.Hits), spec.Limit)]
	}
	if err != nil {
		return nil, err
	}
	hits := slices.Clone(res.Hits)
	slices.SortStableFunc(hits, func(a, b papersearch.Hit) int { return b.Paper.Added.Compare(a.Paper.Added) })
	return hits, nil
}

// Atom's elements, as encoding/xml writes them: every text escaped, and a
// character XML cannot hold replaced.
type (
	atomFeed struct {
		XMLName   xml.Name      `xml:"http://www.w3.org/2005/Atom feed"`
		ID        string        `xml:"id"`
		Title     string        `xml:"title"`
		Subtitle  string        `xml:"subtitle,omitempty"`
		Updated   string        `xml:"updated"`
		Author    atomPerson    `xml:"author"`
		Generator atomGenerator `xml:"generator"`
		Links     []atomLink    `xml:"link"`
		Entries   []atomEntry   `xml:"entry"`
	}
	atomEntry struct {
		ID         string         `xml:"id"`
		Title      string         `xml:"title"`
		Updated    string         `xml:"updated"`
		Published  string         `xml:"published,omitempty"`
		Authors    []atomPerson   `xml:"author"`
		Links      []atomLink     `xml:"link"`
		Categories []atomCategory `xml:"category"`
		Summary    string         `xml:"summary"`
		Content    *atomContent   `xml:"content"`
	}
	atomPerson struct {
		Name string `xml:"name"`
	}
	atomGenerator struct {
		URI  string `xml:"uri,attr,omitempty"`
		Text string `xml:",chardata"`
	}
	atomLink struct {
		Rel  string `xml:"rel,attr"`
		Type string `xml:"type,attr,omitempty"`
		Href string `xml:"href,attr"`
	}
	atomCategory struct {
		Term string `xml:"term,attr"`
	}
	atomContent struct {
		Type string `xml:"type,attr"`
		Text string `xml:",chardata"`
	}
)

// atomTime is t as an Atom date.
func atomTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// renderFeed writes the Atom document of a feed's hits; base is the
// service's URL and self the feed's.
func renderFeed(spec feedSpec, hits []papersearch.Hit, base, self string, now time.Time) ([]byte, error) {
	f := atomFeed{
		ID:        "urn:uuid:" + uuid.NewSHA1(feedNamespace, []byte(spec.Key)).String(),
		Title:     spec.Title,
		Subtitle:  fmt.Sprintf("Papers added in the last %s, newest first", windowText(spec.Window)),
		Updated:   atomTime(now),
		Author:    atomPerson{Name: "papersearch"},
		Generator: atomGenerator{URI: "https://github.com/papersearch/papersearch", Text: "papersearch"},
		Links:     []atomLink{{Rel: "self", Type: MediaAtom, Href: self}},
	}
	if len(hits) > 0 {
		f.Updated = atomTime(hits[0].Paper.Added)
	}
	for _, h := range hits {
		f.Entries = append(f.Entries, feedEntry(spec, h, base))
	}
	body, err := xml.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("write the feed: %w", err)
	}
	return append([]byte(xml.Header), append(body, '\n')...), nil
}

// feedEntry is one paper of a feed. Its text carries no control
// character (encoding/xml replaces C0 ones but writes C1 and bidirectional
// ones as they are) of a paper stored before Complete removed them.
func feedEntry(spec feedSpec, h papersearch.Hit, base string) atomEntry {
	p := h.Paper
	api := base + "/v1/papers/" + url.PathEscape(p.ID)
	e := atomEntry{
		ID:      "urn:uuid:" + uuid.NewSHA1(feedNamespace, []byte(spec.Key+"\x00"+p.ID)).String(),
		Title:   papersearch.StripControls(p.Title),
		Updated: atomTime(p.Added),
		Summary: papersearch.StripControls(why(spec, h)),
		Content: &atomContent{Type: "text", Text: papersearch.StripControls(p.Abstract)},
		Links:   []atomLink{{Rel: "related", Type: "application/json", Href: api}},
	}
	if first, _, ok := papersearch.ParseDate(p.Date); ok {
		e.Published = atomTime(first)
	}
	// A paper with no web page of its own opens in the page's view of it.
	alternate := cmp.Or(papersearch.URIForm(p.URL), base+"/#paper="+url.QueryEscape(p.ID))
	e.Links = append([]atomLink{{Rel: "alternate", Href: alternate}}, e.Links...)
	for _, a := range p.Authors {
		e.Authors = append(e.Authors, atomPerson{Name: papersearch.StripControls(a)})
	}
	for _, t := range p.Tags {
		e.Categories = append(e.Categories, atomCategory{Term: t})
	}
	return e
}

// why says why a paper is in a feed, in words a reader takes as they
// are (the titles and question as stored, in quotation marks, not
// escaped): the collection's members it is nearest to, or what of the
// query it matched; one full stop at its end.
func why(spec feedSpec, h papersearch.Hit) string {
	if spec.Tag != "" {
		near := make([]string, len(h.Because))
		for i, n := range h.Because {
			near[i] = fmt.Sprintf("“%s” (%.2f)", n.Title, n.Similarity)
		}
		return fmt.Sprintf("Recommended for %s because you have %s.", spec.Tag, strings.Join(near, ", "))
	}
	out := "Matches “" + spec.Query + "”"
	if x := h.Explanation; x != nil {
		if len(x.MatchedTerms) > 0 {
			out += " (words: " + strings.Join(x.MatchedTerms, ", ") + ")"
		}
		if x.BestSentence != "" {
			out += ": " + strings.TrimSpace(x.BestSentence)
		}
	}
	if strings.HasSuffix(out, ".") || strings.HasSuffix(out, "?") || strings.HasSuffix(out, "!") {
		return out // the best sentence's own full stop ends it
	}
	return out + "."
}

// windowText is a window in words ("7 days").
func windowText(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		if n := int(d / (24 * time.Hour)); n != 1 {
			return fmt.Sprintf("%d days", n)
		}
		return "day"
	}
	if n := int(d / time.Hour); n != 1 {
		return fmt.Sprintf("%d hours", n)
	}
	return "hour"
}

// serveFeed answers a feed: its Atom document with an ETag, or 304 when
// the client holds that document already (If-None-Match, compared weakly
// as RFC 9110 §13.1.2 says, "*" included; net/http's ServeContent), and a
// problem (412) when If-Match names no current version of it. The
// Last-Modified it sends is its newest paper's arrival, which a change of
// ranking does not move, so If-Modified-Since alone gets the document.
func (s *Server) serveFeed(c echo.Context, spec feedSpec) error {
	now := time.Now()
	hits, err := s.feedHits(c.Request().Context(), spec, now)
	if err != nil {
		return err
	}
	base := s.trust.baseURL(c.Request())
	body, err := renderFeed(spec, hits, base, base+c.Request().URL.RequestURI(), now)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:12]) + `"`
	h.Set(echo.HeaderCacheControl, "max-age=300")
	h.Set("ETag", etag)
	if len(hits) > 0 && hits[0].Paper.Added.Before(now) {
		h.Set(echo.HeaderLastModified, hits[0].Paper.Added.UTC().Format(http.TimeFormat))
	}
	if held := c.Request().Header.Values("If-Match"); len(held) > 0 && !strongMatch(strings.Join(held, ","), etag) {
		return problem(http.StatusPreconditionFailed, "precondition-failed", "If-Match names no current version of this feed: its ETag is now "+etag)
	}
	h.Set(echo.HeaderContentType, MediaAtom+"; charset=utf-8")
	// A feed is fetched whole: ServeContent is here for If-None-Match, and
	// a range (whose refusal it writes as plain text) is ignored, as RFC
	// 9110 lets a server ignore one.
	req := c.Request()
	req.Header.Del("Range")
	req.Header.Del("If-Range")
	http.ServeContent(wholeOnly{c.Response()}, req, "", time.Time{}, bytes.NewReader(body))
	return nil
}

// strongMatch reports whether the If-Match field list names etag, or
// "*": RFC 9110 §13.1.1's strong comparison, so that a weak tag (W/"…")
// never matches. An entity-tag's opaque part may hold commas; the list is
// read tag by tag.
func strongMatch(list, etag string) bool {
	for list != "" {
		list = strings.TrimLeft(list, " \t,")
		switch {
		case list == "":
			return false
		case list[0] == '*':
			return true
		}
		weak := strings.HasPrefix(list, "W/")
		if weak {
			list = list[2:]
		}
		if list == "" || list[0] != '"' {
			return false // not a list of entity-tags: matches nothing
		}
		end := strings.IndexByte(list[1:], '"')
		if end < 0 {
			return false
		}
		if tag := list[:end+2]; !weak && tag == etag {
			return true
		}
		list = list[end+2:]
	}
	return false
}

// wholeOnly takes back the Accept-Ranges that http.ServeContent says: a
// feed is sent whole.
type wholeOnly struct{ http.ResponseWriter }

func (w wholeOnly) WriteHeader(code int) {
	w.Header().Del("Accept-Ranges")
	w.ResponseWriter.WriteHeader(code)
}

// collectionFeed answers GET /v1/collections/{tag}/feed.atom: the
// collection's recommendations among the papers added within the window.
func (s *Server) collectionFeed(c echo.Context) error {
	tag, err := collectionTag(c)
	if err != nil {
		return err
	}
	params := c.QueryParams()
	spec := feedSpec{Key: "collection:" + tag, Tag: tag, Title: "papersearch: new for " + tag}
	if err := feedParams(params, &spec, "method"); err != nil {
		return err
	}
	if spec.Method = search.RecommendMethod(params.Get("method")); params.Has("method") && spec.Method == "" {
		return invalid("method must be neighbours, centroid, rocchio or logistic", wire.FieldProblem{Param: "method", Detail: `must be neighbours, centroid, rocchio or logistic, got ""`})
	}
	return asParameterProblem(s.serveFeed(c, spec))
}

// feedParams reads a feed's parameters: window, limit and a filter's,
// without dates (the window's); others are refused but those of more.
func feedParams(params url.Values, spec *feedSpec, more ...string) error {
	if err := knownParams(params, append([]string{"window", "limit"}, more...)...); err != nil {
		return err
	}
	for _, name := range []string{"since", "until", "by"} {
		if params.Has(name) {
			return invalid("a feed's window bounds when its papers were added", wire.FieldProblem{Param: name, Detail: "is not a parameter of a feed: give window"})
		}
	}
	spec.Limit = DefaultFeedLimit
	if err := intParam(params, "limit", 1, MaxFeedLimit, &spec.Limit); err != nil {
		return err
	}
	raw := DefaultFeedWindow
	if params.Has("window") {
		raw = params.Get("window")
	}
	window, err := papersearch.ParsePeriod(raw)
	if err != nil {
		return invalid("window "+err.Error(), wire.FieldProblem{Param: "window", Detail: err.Error()})
	}
	spec.Window = window
	return filterParams(params, &spec.Filter)
}
