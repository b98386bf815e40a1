// Package client is a small typed Go client of the papersearch HTTP API.
// Errors the service answers with are *wire.Problem values (errors.As).
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
)

// Client calls one papersearch service. The zero HTTP client is replaced by
// one with a 60 s timeout.
type Client struct {
	base   string
	http   *http.Client
	apiKey string
}

// New returns a client of the service at baseURL (e.g.
// "http://127.0.0.1:8080"). apiKey, if not empty, is sent to write
// endpoints as a bearer token.
func New(baseURL, apiKey string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("papersearch server %q: want http(s)://host:port", baseURL)
	}
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), http: hc, apiKey: apiKey}, nil
}

// SimilarParams are the options of a similar-paper request.
type SimilarParams struct {
	Limit   int
	Mode    string
	Cursor  string
	Explain bool
	// Filter keeps the papers within it (its Exclude and Only are not
	// parameters of the request).
	Filter papersearch.Filter
	// Aspect ("background", "method", "result") compares the paper's
	// sentences of that role; Sentences compares exactly those sentences
	// (0-based places in its abstract).
	Aspect    string
	Sentences []int
}

// Search runs POST /v1/search.
func (c *Client) Search(ctx context.Context, req wire.SearchRequest) (wire.SearchResponse, error) {
	return call[wire.SearchResponse](ctx, c, http.MethodPost, "/v1/search", req)
}

// Similar runs GET /v1/papers/{id}/similar.
func (c *Client) Similar(ctx context.Context, id string, p SimilarParams) (wire.SearchResponse, error) {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" && v != "0" {
			q.Set(k, v)
		}
	}
	set("limit", strconv.Itoa(p.Limit))
	set("mode", p.Mode)
	set("cursor", p.Cursor)
	filterQuery(q, p.Filter)
	if p.Explain {
		q.Set("explain", "true")
	}
	if p.Aspect != "" {
		q.Set("aspect", p.Aspect)
	}
	if len(p.Sentences) > 0 {
		places := make([]string, len(p.Sentences))
		for i, s := range p.Sentences {
			places[i] = strconv.Itoa(s)
		}
		q.Set("sentences", strings.Join(places, ","))
	}
	path := "/v1/papers/" + url.PathEscape(id) + "/similar"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return call[wire.SearchResponse](ctx, c, http.MethodGet, path, nil)
}

// filterQuery adds f's query parameters to q, as GET requests take a
// filter.
func filterQuery(q url.Values, f papersearch.Filter) {
	for _, p := range []struct{ name, value string }{{"year_min", strconv.Itoa(f.YearMin)}, {"year_max", strconv.Itoa(f.YearMax)},
		{"author", f.Author}, {"since", string(f.Since)}, {"until", string(f.Until)}, {"by", string(f.By)}} {
		if p.value != "" && p.value != "0" {
			q.Set(p.name, p.value)
		}
	}
	for _, v := range f.Venues {
		q.Add("venue", v)
	}
	for _, t := range f.Tags {
		q.Add("tag", t)
	}
}

// RecommendParams are the options of a collection's recommendations.
type RecommendParams struct {
	Limit  int
	Cursor string
	// Method is how the collection ranks papers ("": the service's
	// default): neighbours, centroid, rocchio or logistic.
	Method string
	// Filter keeps the recommendations within it (its Exclude and Only
	// are not parameters of the request).
	Filter papersearch.Filter
}

// Recommend runs GET /v1/collections/{tag}/recommendations.
func (c *Client) Recommend(ctx context.Context, tag string, p RecommendParams) (wire.SearchResponse, error) {
	q := url.Values{}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Cursor != "" {
		q.Set("cursor", p.Cursor)
	}
	if p.Method != "" {
		q.Set("method", p.Method)
	}
	filterQuery(q, p.Filter)
	path := "/v1/collections/" + url.PathEscape(tag) + "/recommendations"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return call[wire.SearchResponse](ctx, c, http.MethodGet, path, nil)
}

// MapParams are the options of the map of the corpus.
type MapParams struct {
	// Level is the level whose clusters the response's Cluster gives (nil:
	// the finest).
	Level *int
	// Highlight lights up the results of a search; Collection the papers
	// of a collection (one of them).
	Highlight, Collection string
	// NoTitles leaves the papers' titles out.
	NoTitles bool
	// Filter keeps the map's papers within it (its Exclude and Only are
	// not parameters of the request).
	Filter papersearch.Filter
}

// Map runs GET /v1/map. Before the service's first map is laid out it is
// an error whose *wire.Problem has status 503 and RetryAfter set.
func (c *Client) Map(ctx context.Context, p MapParams) (wire.MapResponse, error) {
	q := url.Values{}
	if p.Level != nil {
		q.Set("level", strconv.Itoa(*p.Level))
	}
	if p.Highlight != "" {
		q.Set("q", p.Highlight)
	}
	if p.Collection != "" {
		q.Set("collection", p.Collection)
	}
	if p.NoTitles {
		q.Set("titles", "false")
	}
	filterQuery(q, p.Filter)
	path := "/v1/map"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return call[wire.MapResponse](ctx, c, http.MethodGet, path, nil)
}

// Collections runs GET /v1/collections.
func (c *Client) Collections(ctx context.Context) (wire.CollectionsResponse, error) {
	return call[wire.CollectionsResponse](ctx, c, http.MethodGet, "/v1/collections", nil)
}

// Collection runs GET /v1/collections/{tag}/papers: the collection's
// papers and those marked not interested for it.
func (c *Client) Collection(ctx context.Context, tag string) (wire.CollectionResponse, error) {
	return call[wire.CollectionResponse](ctx, c, http.MethodGet, "/v1/collections/"+url.PathEscape(tag)+"/papers", nil)
}

// AddToCollection runs POST /v1/collections/{tag}/papers: the papers join
// the collection (and lose a not-interested mark for it).
func (c *Client) AddToCollection(ctx context.Context, tag string, ids []string) (wire.CollectionChange, error) {
	return call[wire.CollectionChange](ctx, c, http.MethodPost, "/v1/collections/"+url.PathEscape(tag)+"/papers", wire.CollectionPapers{IDs: ids})
}

// RemoveFromCollection runs DELETE /v1/collections/{tag}/papers/{id}.
func (c *Client) RemoveFromCollection(ctx context.Context, tag, id string) (wire.CollectionChange, error) {
	return call[wire.CollectionChange](ctx, c, http.MethodDelete, "/v1/collections/"+url.PathEscape(tag)+"/papers/"+url.PathEscape(id), nil)
}

// MarkNotInterested runs POST /v1/collections/{tag}/not-interested: the
// collection's recommendations move away from the papers and never return
// them.
func (c *Client) MarkNotInterested(ctx context.Context, tag string, ids []string) (wire.CollectionChange, error) {
	return call[wire.CollectionChange](ctx, c, http.MethodPost, "/v1/collections/"+url.PathEscape(tag)+"/not-interested", wire.CollectionPapers{IDs: ids})
}

// UnmarkNotInterested runs DELETE /v1/collections/{tag}/not-interested/{id}.
func (c *Client) UnmarkNotInterested(ctx context.Context, tag, id string) (wire.CollectionChange, error) {
	return call[wire.CollectionChange](ctx, c, http.MethodDelete, "/v1/collections/"+url.PathEscape(tag)+"/not-interested/"+url.PathEscape(id), nil)
}

// FeedParams are the parameters of a collection's feed.
type FeedParams struct {
	// Window is how far back the feed reaches by when papers were added
	// ("36h", "7d", "2w"; "" is the service's default, 7d).
	Window string
	Limit  int
	Method string
	// Filter keeps the entries within it; its dates are the window's.
	Filter papersearch.Filter
}

// CollectionFeedURL is the URL of a collection's Atom feed, for a feed
// reader: GET /v1/collections/{tag}/feed.atom.
func (c *Client) CollectionFeedURL(tag string, p FeedParams) string {
	q := url.Values{}
	if p.Window != "" {
		q.Set("window", p.Window)
	}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Method != "" {
		q.Set("method", p.Method)
	}
	filterQuery(q, p.Filter)
	u := c.base + "/v1/collections/" + url.PathEscape(tag) + "/feed.atom"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// CreateAlert runs POST /v1/alerts: a saved search, answered with its
// feed's URL (FeedURL).
func (c *Client) CreateAlert(ctx context.Context, req wire.AlertRequest) (wire.Alert, error) {
	return call[wire.Alert](ctx, c, http.MethodPost, "/v1/alerts", req)
}

// Alerts runs GET /v1/alerts.
func (c *Client) Alerts(ctx context.Context) (wire.AlertsResponse, error) {
	return call[wire.AlertsResponse](ctx, c, http.MethodGet, "/v1/alerts", nil)
}

// DeleteAlert runs DELETE /v1/alerts/{id}.
func (c *Client) DeleteAlert(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v1/alerts/"+url.PathEscape(id), nil, nil)
}

// AddWatch runs POST /v1/watches: a source the server imports from by
// itself, every period.
func (c *Client) AddWatch(ctx context.Context, req wire.WatchRequest) (wire.Watch, error) {
	return call[wire.Watch](ctx, c, http.MethodPost, "/v1/watches", req)
}

// Watches runs GET /v1/watches.
func (c *Client) Watches(ctx context.Context) (wire.WatchesResponse, error) {
	return call[wire.WatchesResponse](ctx, c, http.MethodGet, "/v1/watches", nil)
}

// RemoveWatch runs DELETE /v1/watches/{id}.
func (c *Client) RemoveWatch(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v1/watches/"+url.PathEscape(id), nil, nil)
}

// RunWatch runs POST /v1/watches/{id}/run: the watch is due now, and the
// server starts it within its next look.
func (c *Client) RunWatch(ctx context.Context, id string) (wire.Watch, error) {
	return call[wire.Watch](ctx, c, http.MethodPost, "/v1/watches/"+url.PathEscape(id)+"/run", nil)
}

// Get runs GET /v1/papers/{id}.
func (c *Client) Get(ctx context.Context, id string) (papersearch.Paper, error) {
	return call[papersearch.Paper](ctx, c, http.MethodGet, "/v1/papers/"+url.PathEscape(id), nil)
}

// Ingest runs POST /v1/papers.
func (c *Client) Ingest(ctx context.Context, papers []papersearch.Paper) (wire.IngestResponse, error) {
	return call[wire.IngestResponse](ctx, c, http.MethodPost, "/v1/papers", wire.IngestRequest{Papers: papers})
}

// Delete runs DELETE /v1/papers/{id}.
func (c *Client) Delete(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v1/papers/"+url.PathEscape(id), nil, nil)
}

// StartImport runs POST /v1/imports; the job's progress is Import's.
func (c *Client) StartImport(ctx context.Context, req wire.ImportRequest) (wire.ImportJob, error) {
	return call[wire.ImportJob](ctx, c, http.MethodPost, "/v1/imports", req)
}

// Import runs GET /v1/imports/{id}.
func (c *Client) Import(ctx context.Context, id string) (wire.ImportJob, error) {
	return call[wire.ImportJob](ctx, c, http.MethodGet, "/v1/imports/"+url.PathEscape(id), nil)
}

// call runs a request whose answer is a T.
func call[T any](ctx context.Context, c *Client, method, path string, in any) (T, error) {
	var out T
	return out, c.do(ctx, method, path, in, &out)
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.apiKey != "" { // the routes that need it are the service's to say (writes, imports, and embeddings beyond loopback)
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("papersearch %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("papersearch %s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 400 {
		p := &wire.Problem{}
		if json.Unmarshal(b, p) != nil || p.Status == 0 {
			p = &wire.Problem{Status: resp.StatusCode, Title: http.StatusText(resp.StatusCode), Detail: strings.TrimSpace(string(b))}
		}
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			p.RetryAfter = secs
		}
		return p
	}
	if out == nil || len(b) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("papersearch %s %s: decode the answer: %w", method, path, err)
	}
	return nil
}
