// Package wire holds the JSON bodies of papersearch's HTTP API that the
// server (package api) and the Go client (package api/client) share, so a
// client depends on these types and net/http only.
package wire

import (
	"time"

	"github.com/papersearch/papersearch"
)

// ProblemType is the base of the type URIs of this API's problems.
const ProblemType = "https://papersearch.dev/problems/"

// Problem is an RFC 9457 problem details object, served as
// application/problem+json.
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`
	// Errors lists what is wrong with each offending request field.
	Errors []FieldProblem `json:"errors,omitempty"`
	// RequestID is the id of the request, also sent as X-Request-Id.
	RequestID string `json:"request_id,omitempty"`
	// OpenAI repeats the problem as an OpenAI error object on the
	// OpenAI-compatible endpoint, so OpenAI client libraries read it.
	OpenAI *OpenAIError `json:"error,omitempty"`
	// RetryAfter, if positive, is sent as the Retry-After header, in seconds.
	RetryAfter int `json:"-"`
}

// FieldProblem is one invalid field: a JSON pointer (RFC 6901) into the
// request body, or the name of a query or path parameter, and what is wrong.
type FieldProblem struct {
	Pointer string `json:"pointer,omitempty"`
	Param   string `json:"parameter,omitempty"`
	Detail  string `json:"detail"`
}

func (p *Problem) Error() string { return p.Title + ": " + p.Detail }

// OpenAIError is the OpenAI error object, sent inside the problem body as
// its "error" member so OpenAI client libraries read it too.
type OpenAIError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code,omitempty"`
}

// SearchRequest is the body of POST /v1/search.
type SearchRequest struct {
	// Query is the question in plain words; it may be omitted when Like
	// names papers.
	Query string `json:"query,omitempty" jsonschema:"the question in plain words; may be omitted when like names papers"`
	// Like and Unlike are paper ids to move the results toward and away from.
	Like   []string `json:"like,omitempty" jsonschema:"ids of papers the results should resemble"`
	Unlike []string `json:"unlike,omitempty" jsonschema:"ids of papers the results should not resemble"`
	// Filters restrict the papers considered.
	Filters *papersearch.Filter `json:"filters,omitempty" jsonschema:"restrict the papers considered"`
	// Mode is "hybrid" (default), "dense" or "lexical".
	Mode   string `json:"mode,omitempty" jsonschema:"hybrid (default: meaning and words), dense (meaning) or lexical (words, BM25)"`
	Limit  *int   `json:"limit,omitempty" jsonschema:"how many results, 1 to 100 (default 10)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"the next_cursor of the previous page"`
	// Explain adds an explanation to each result.
	Explain bool `json:"explain,omitempty" jsonschema:"say why each result was returned: its ranks, matched words and best sentence"`
	// Aspect ("background", "method", "result") ranks by sentences of
	// that role: the liked papers' and the query's.
	Aspect string `json:"aspect,omitempty" jsonschema:"rank by sentences of this role of the liked papers and the query: background, method or result"`
}

// SearchResponse is the body of a successful search or similar request.
type SearchResponse struct {
	Results []papersearch.Hit `json:"results"`
	// NextCursor fetches the next page; null on the last page.
	NextCursor *string               `json:"next_cursor"`
	Index      papersearch.IndexInfo `json:"index"`
	// Degraded names retrievals that failed, whose results are missing.
	Degraded []string `json:"degraded"`
	// Evidence, for a free-text search with a lexical side, is how much of
	// the query's ideal BM25 score the best lexical match reaches, in
	// [0, 1]: near 0, no paper holds the query's informative words, and
	// the results are only the nearest by meaning; absent when the ranking
	// is empty (search.Results.Evidence).
	Evidence *float64 `json:"evidence,omitempty"`
	TookMS   float64  `json:"took_ms"`
}

// CollectionsResponse is the body of GET /v1/collections: every tag the
// stored papers hold and how many hold it, by tag.
type CollectionsResponse struct {
	Collections []papersearch.Collection `json:"collections"`
}

// CollectionPapers is the body of POST /v1/collections/{tag}/papers and
// /not-interested: the papers to add to the collection, or to mark not
// interested for it.
type CollectionPapers struct {
	IDs []string `json:"ids" jsonschema:"paper ids (or source ids of papers), 1 to 1000"`
}

// CollectionResponse is the body of GET /v1/collections/{tag}/papers: the
// collection's papers and those marked not interested for it, by id.
type CollectionResponse struct {
	Tag           string              `json:"tag"`
	Papers        []papersearch.Paper `json:"papers"`
	NotInterested []papersearch.Paper `json:"not_interested"`
}

// CollectionChange says what a change to a collection's papers did: the
// papers it updated, by id.
type CollectionChange struct {
	Tag     string   `json:"tag"`
	Updated []string `json:"updated"`
}

// IngestRequest is the body of POST /v1/papers: {"papers": [...]}, or a
// single paper object.
type IngestRequest struct {
	Papers []papersearch.Paper `json:"papers"`
}

// IngestResponse says what the ingest did. Every paper it names is stored
// durably when the response is sent.
type IngestResponse struct {
	papersearch.IngestSummary
	// Merged counts the papers that joined a work under another id.
	Merged int `json:"merged"`
	// IDs holds, for each paper sent, the id it is stored under: its own,
	// or that of the stored work it is a version of.
	IDs []string `json:"ids"`
}

// ImportRequest is the body of POST /v1/imports: what to import, and the
// tags its papers get.
type ImportRequest struct {
	// Source is "openreview", "arxiv", "openalex", "bibtex" or "csl".
	Source string `json:"source"`
	// Target is what the source is asked for: a venue id for openreview
	// ("NeurIPS.cc/2026/Conference"), a query for arxiv, a filter for
	// openalex. Content is the file of a bibtex or csl import.
	Target  string `json:"target,omitempty"`
	Content string `json:"content,omitempty"`
	// Max bounds the papers of an arxiv or openalex import (default 1000).
	Max  *int     `json:"max,omitempty"`
	Tags []string `json:"tags,omitempty"`
}

// ImportJob is an import running or finished, as GET /v1/imports/{id}
// reports it.
type ImportJob struct {
	ID     string   `json:"id"`
	Source string   `json:"source"`
	Target string   `json:"target,omitempty"`
	Tags   []string `json:"tags"`
	// Status is "running", "done", "cancelled" (by POST /v1/imports/{id}/cancel) or "failed"
	// (Error says why, in words that name no internals); what was stored
	// stays stored, and the same import again resumes after it.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// Read counts the source's records so far, Stored the papers ingested,
	// Rejected the records that made no paper (NoAbstract of them for
	// lack of an abstract), listed in Rejections (the first 100, each
	// reason at most 300 bytes, all at most 32 KiB), and
	// Merged the records that joined a paper stored under another id as
	// another version of its work (a preprint and its conference paper).
	Read       int               `json:"read"`
	Stored     int               `json:"stored"`
	Rejected   int               `json:"rejected"`
	NoAbstract int               `json:"no_abstract"`
	Merged     int               `json:"merged"`
	Rejections []ImportRejection `json:"rejections"`
	// Embedded counts the papers embedded so far, those of the batch in
	// hand included: it moves while a batch (up to 256 papers) is
	// embedded, before the batch is stored whole; papers stored before
	// with the same text need no embedding.
	Embedded int `json:"embedded"`
	// Summary is the ingest's, once the import is done.
	Summary    *papersearch.IngestSummary `json:"summary,omitempty"`
	StartedAt  time.Time                  `json:"started_at"`
	FinishedAt *time.Time                 `json:"finished_at,omitempty"`
}

// ImportRejection is a record an import could not make a paper of: its
// place in the source (a line of a file, a position in an API's results)
// and why.
type ImportRejection struct {
	Record int    `json:"record"`
	Detail string `json:"detail"`
}

// AlertRequest is the body of POST /v1/alerts: a saved search whose feed
// lists the papers added within its window that fit a query or a
// collection, within its filters.
type AlertRequest struct {
	// Query or Collection, exactly one: the words the papers should
	// answer, or the collection (a tag) they should fit.
	Query      string `json:"query,omitempty" jsonschema:"the question in plain words the feed's papers answer; or give collection"`
	Collection string `json:"collection,omitempty" jsonschema:"the collection (a tag) the feed's papers are recommended for; or give query"`
	// Filters restrict the papers; their dates are the window's to set.
	Filters *papersearch.Filter `json:"filters,omitempty" jsonschema:"restrict the papers considered (without since, until or by: the window bounds when papers were added)"`
	// Window is how far back the feed reaches, by when papers were added:
	// a number of hours, days or weeks ("36h", "7d", "2w").
	Window *string `json:"window,omitempty" jsonschema:"how far back the feed reaches by when papers were added: hours, days or weeks such as 36h, 7d or 2w (default 7d, at most 366d)"`
	// Limit is how many entries the feed holds at most.
	Limit *int `json:"limit,omitempty" jsonschema:"the most entries the feed holds, 1 to 100 (default 20)"`
}

// Alert is a saved search as stored and answered: its request, filled
// with the defaults, its id and when it was made; FeedURL is where its
// Atom feed is (answered, not stored).
type Alert struct {
	ID         string              `json:"id"`
	Query      string              `json:"query,omitempty"`
	Collection string              `json:"collection,omitempty"`
	Filters    *papersearch.Filter `json:"filters,omitempty"`
	Window     string              `json:"window"`
	Limit      int                 `json:"limit"`
	Created    time.Time           `json:"created"`
	FeedURL    string              `json:"feed_url,omitempty"`
}

// AlertsResponse is the body of GET /v1/alerts, newest first.
type AlertsResponse struct {
	Alerts []Alert `json:"alerts"`
}

// WatchRequest is the body of POST /v1/watches: a network source the
// server imports from by itself, every period, each run going on from
// where the last ended.
type WatchRequest struct {
	// Source is "arxiv", "openalex" or "openreview"; Target what it is
	// asked for, as an import's.
	Source string `json:"source" jsonschema:"the source: arxiv, openalex or openreview"`
	Target string `json:"target" jsonschema:"what the source is asked for: an arXiv query, an OpenAlex filter or an OpenReview venue id"`
	// Every is the period between runs ("6h", "1d"; default 1d).
	Every *string `json:"every,omitempty" jsonschema:"the time between runs: hours, days or weeks such as 6h, 1d or 1w (default 1d)"`
	// Tags go on every paper the watch imports, beside the source's own.
	Tags []string `json:"tags,omitempty" jsonschema:"tags every paper the watch imports gets (a collection, say)"`
	// Max bounds the papers of one run (default 1000).
	Max *int `json:"max,omitempty" jsonschema:"the most papers one run imports, 1 to 100000 (default 1000)"`
	// Since is the first day the first run reads from, for the sources
	// read by date (arxiv, openalex; default 7 days before the watch is
	// made).
	Since *string `json:"since,omitempty" jsonschema:"the day (YYYY-MM-DD) the first run reads from, for arxiv and openalex (default: 7 days ago)"`
}

// Watch is a watched source as GET /v1/watches reports it: its request
// with the defaults filled, where its next run goes on from, and how its
// runs went.
type Watch struct {
	ID      string    `json:"id"`
	Source  string    `json:"source"`
	Target  string    `json:"target"`
	Every   string    `json:"every"`
	Tags    []string  `json:"tags"`
	Max     int       `json:"max"`
	Created time.Time `json:"created"`
	// Since, for a source read by date, is the day the next run reads
	// from: that of the newest paper a run has read (inclusive, as a
	// source may add more of that day). Position, for one read in order
	// (openreview), is where the next run goes on.
	Since    string `json:"since,omitempty"`
	Position string `json:"position,omitempty"`
	// Running says a run is under way (here or in another process on the
	// same data folder); NextRun is when the next one is due.
	Running bool      `json:"running"`
	NextRun time.Time `json:"next_run"`
	// Runs counts the runs that ended; the Last fields are the latest's:
	// when it started and ended, the records it read, the new papers it
	// added, and its error (in words that name no internals) if it failed.
	Runs         int        `json:"runs"`
	LastStarted  *time.Time `json:"last_started,omitempty"`
	LastFinished *time.Time `json:"last_finished,omitempty"`
	LastRead     int        `json:"last_read"`
	LastAdded    int        `json:"last_added"`
	LastError    string     `json:"last_error,omitempty"`
}

// WatchesResponse is the body of GET /v1/watches, oldest first.
type WatchesResponse struct {
	Watches []Watch `json:"watches"`
}

// MapScale is the largest coordinate of a map: a paper's place is two
// integers from 0 to MapScale (16 bits each, the unit square quantised).
const MapScale = 65535

// MapResponse is the body of GET /v1/map: the papers within the filter,
// column by column (the i-th id's place is x[i], y[i]), each level's
// clusters, and which papers a search or a collection lights up.
type MapResponse struct {
	// Built is when the map was laid out; papers written since are
	// placed among their nearest (Placed) until it is laid out again.
	Built time.Time `json:"built"`
	Scale int       `json:"scale"`
	// Level is the level Cluster gives; Levels the clusters of each,
	// coarsest first.
	Level  int            `json:"level"`
	Levels [][]MapCluster `json:"levels"`
	IDs    []string       `json:"ids"`
	X      []int          `json:"x"`
	Y      []int          `json:"y"`
	// Cluster is each paper's cluster at Level.
	Cluster []int `json:"cluster"`
	// Titles are the papers' titles, unless titles=false.
	Titles []string `json:"titles,omitempty"`
	// Placed and Highlight are indices into IDs.
	Placed    []int `json:"placed"`
	Highlight []int `json:"highlight"`
}

// MapCluster is one cluster of a map's level: its parent in the level
// above (-1 at the top), its papers' number and mean place, and its topic.
type MapCluster struct {
	ID     int    `json:"id"`
	Parent int    `json:"parent"`
	Size   int    `json:"size"`
	X      int    `json:"x"`
	Y      int    `json:"y"`
	Label  string `json:"label"`
	// Terms name the topic, most distinctive first; Central are the ids of
	// its most central papers.
	Terms   []string `json:"terms"`
	Central []string `json:"central"`
}
