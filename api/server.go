// Package api serves papersearch over HTTP with echo: routes, request
// validation and RFC 9457 problem+json errors.
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/seeds/imports"
)

// Engine is what the server needs from the search engine.
type Engine interface {
	Search(ctx context.Context, q search.Query) (search.Results, error)
	Similar(ctx context.Context, q search.SimilarQuery) (search.Results, error)
	Get(ctx context.Context, id string) (papersearch.Paper, error)
	Collections(ctx context.Context) ([]papersearch.Collection, error)
	Index(ctx context.Context) (papersearch.IndexInfo, error)
	// Ping reports whether the store answers now, from no cache.
	Ping(ctx context.Context) error
	// Models lists the models Embed answers for, the index's first.
	Models() []embed.ModelInfo
	// Encoders says what each local model's dense layers compute in.
	Encoders() map[string]embed.Choice
	// Embed embeds texts as given with the named model ("": the index's).
	Embed(ctx context.Context, model string, texts []string) ([][]float32, int, error)
	// Add stores a batch of papers through the one pipeline, each work
	// once, whole or not at all (search.Engine.Add).
	Add(ctx context.Context, papers []papersearch.Paper, opts search.AddOptions) (search.AddSummary, error)
	// Put stores a batch of papers by id as they are, whole or not at all
	// (search.Engine.Put): a patched paper keeps its id.
	Put(ctx context.Context, papers []papersearch.Paper) (papersearch.IngestSummary, error)
	Import(ctx context.Context, src search.Source, opts search.ImportOptions) (search.ImportSummary, error)
	Delete(ctx context.Context, id string) error
}

// DefaultMaxBody bounds a request body, in bytes.
const DefaultMaxBody = 1 << 20

// Options configure a Server. The zero value is a working default.
type Options struct {
	Logger  *slog.Logger
	MaxBody int64 // request body limit in bytes; 0 means DefaultMaxBody
	// Ready, if set, is asked by /readyz after the store answers; an error
	// (such as "seeding 5 of 19 papers") makes the service report not ready.
	Ready func() error
	// APIKey, if set, is the bearer token the write endpoints require.
	APIKey string
	// OpenWrites allows writes without a key; set it only when the service
	// listens on loopback.
	OpenWrites bool
	// RateLimit, if its Rate is positive, limits requests per client address.
	RateLimit RateLimit
	// ProtectEmbeddings puts POST /v1/embeddings under the write
	// endpoints' key rule (the key when one is set; without one, open only
	// with OpenWrites): its CPU is the service's to give.
	ProtectEmbeddings bool
	// EmbedTokens, if its Rate is positive, bounds the tokens per second
	// each client address may have embedded through /v1/embeddings (Burst:
	// the most one request may cost before the client waits).
	EmbedTokens RateLimit
	// Metrics, if set, are served at /metrics and updated by every request;
	// New creates its own otherwise.
	Metrics *Metrics
	// Importer, if set, opens the sources of POST /v1/imports
	// (imports.Config.Open); without it imports answer 501.
	Importer imports.Opener
}

// Server is the HTTP API. It implements http.Handler.
type Server struct {
	echo       *echo.Echo
	engine     Engine
	log        *slog.Logger
	maxBody    int64
	ready      func() error
	apiKey     string
	openWrites bool
	// tokens decodes token-array inputs of /v1/embeddings, loaded on first
	// use (the vocabulary takes about 100 ms and 20 MB).
	tokens func() (*tokenDecoder, error)
	// lastReadiness is what the last readiness probe found (see readiness).
	lastReadiness atomic.Pointer[string]
	// embedTokens meters /v1/embeddings' tokens per client; nil: unmetered.
	embedTokens *tokenMeter
	probe       atomic.Pointer[probeResult] // the embedder's last readiness probe
	pageCSP     string
	openAPI     []byte        // the OpenAPI document, for this service's model
	imports     *imports.Jobs // nil: imports answer 501
	mcp         *mcp.Server   // the Model Context Protocol server (see MCP)
}

// probeResult is a readiness probe of the embedder and when it ran.
type probeResult struct {
	at  time.Time
	err error
}

// probeEvery is how long a readiness probe of the embedder is trusted.
const probeEvery = 5 * time.Second

// embedderHealth embeds a short text at most every probeEvery, within 2 s.
func (s *Server) embedderHealth(ctx context.Context) error {
	if p := s.probe.Load(); p != nil && time.Since(p.at) < probeEvery {
		return p.err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, _, err := s.engine.Embed(ctx, "", []string{"papersearch readiness probe"})
	if err != nil {
		s.log.Warn("readiness probe: query embedding fails", "error", err)
	}
	s.probe.Store(&probeResult{at: time.Now(), err: err})
	return err
}

// New returns a Server answering from engine.
func New(engine Engine, opts Options) *Server {
	s := &Server{engine: engine, log: opts.Logger, maxBody: opts.MaxBody, ready: opts.Ready,
		apiKey: opts.APIKey, openWrites: opts.OpenWrites, tokens: sync.OnceValues(newTokenDecoder), pageCSP: pageCSP(indexHTML),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if opts.Importer != nil {
		s.imports = imports.NewJobs(engine, opts.Importer, s.log)
	}
	if opts.EmbedTokens.Rate > 0 {
		s.embedTokens = newTokenMeter(opts.EmbedTokens)
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBody
	}
	doc, err := openAPIFor(engine.Models())
	if err != nil {
		panic(err) // the embedded document is broken: a build defect, caught by every test
	}
	s.openAPI = doc
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.errorHandler
	metrics := opts.Metrics
	if metrics == nil {
		metrics = NewMetrics()
	}
	metrics.indexed(func(ctx context.Context) (int, error) {
		info, err := engine.Index(ctx)
		return info.Papers, err
	})
	// Outermost first: every request gets an id, then one timing that logs
	// and counts it whatever happens inside, including a panic, which
	// recoverPanics (the innermost) turns into an error first.
	e.Use(middleware.RequestID())
	e.Use(s.observe(metrics))
	e.GET("/metrics", metrics.handler())
	if opts.RateLimit.Rate > 0 {
		e.Use(newLimiter(opts.RateLimit).middleware)
	}
	e.Use(s.recoverPanics)

	e.GET("/", s.page)
	e.GET("/openapi.json", s.openapi)
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.POST("/v1/search", s.search)
	// A paper's id may hold slashes (a DOI, doi:10.1109/jproc.2021.3058954),
	// raw or percent-encoded: an id of one path segment takes the routes
	// that name it, one with raw slashes the rest of the path (see
	// paperRoute).
	e.GET("/v1/collections", s.collections)
	e.GET("/v1/papers/:id", s.getPaper)
	e.GET("/v1/papers/:id/similar", s.similar)
	e.GET("/v1/papers/*", s.paperRoute)
	if opts.ProtectEmbeddings {
		e.POST(embeddingsPath, s.embeddings, s.requireKey)
	} else {
		e.POST(embeddingsPath, s.embeddings)
	}
	e.POST("/v1/papers", s.ingest, s.requireKey)
	e.PATCH("/v1/papers/:id", s.patchPaper, s.requireKey)
	e.PATCH("/v1/papers/*", readOnlySimilar(s.patchPaper), s.requireKey)
	e.DELETE("/v1/papers/:id", s.deletePaper, s.requireKey)
	e.DELETE("/v1/papers/*", readOnlySimilar(s.deletePaper), s.requireKey)
	// The Model Context Protocol's streamable HTTP transport, sessionless:
	// every request stands alone, as the REST routes do.
	s.mcp = newMCP(s)
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true, Logger: s.log,
			MaxRequestBodyBytes: BatchBodyFactor * s.maxBody}) // an import's file, as POST /v1/imports takes it
	e.Any(mcpPath, echo.WrapHandler(mcpHandler))
	e.POST("/v1/imports", s.startImport, s.requireKey)
	e.GET("/v1/imports/:id", s.importStatus, s.requireKey)
	e.DELETE("/v1/imports/:id", s.cancelImport, s.requireKey)
	s.echo = e
	return s
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.echo.ServeHTTP(w, r) }

func requestID(c echo.Context) string { return c.Response().Header().Get(echo.HeaderXRequestID) }

// recoverPanics turns a panic in a handler into a logged 500 problem; the
// process keeps serving.
func (s *Server) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				err = fmt.Errorf("panic serving %s %s: %v", c.Request().Method, c.Request().URL.Path, r)
			}
		}()
		return next(c)
	}
}

// observe times every request once, answers its error, and then logs it
// and counts it in the metrics.
func (s *Server) observe(metrics *Metrics) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			if err := next(c); err != nil {
				c.Error(err)
			}
			took := time.Since(start)
			metrics.request(c, took)
			req := c.Request()
			if s.log.Enabled(req.Context(), slog.LevelInfo) {
				s.log.Info("request", "method", req.Method, "path", req.URL.Path, "status", c.Response().Status,
					"bytes", c.Response().Size, "duration_ms", float64(took.Microseconds())/1000,
					"request_id", requestID(c), "remote", c.RealIP())
			}
			return nil
		}
	}
}

func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 once the store answers and the model is loaded.
func (s *Server) readyz(c echo.Context) error {
	err := s.engine.Ping(c.Request().Context())
	var info papersearch.IndexInfo
	if err == nil {
		info, err = s.engine.Index(c.Request().Context())
	}
	if err != nil {
		p := problem(http.StatusServiceUnavailable, "not-ready", "the store is not answering; the log says why")
		p.RetryAfter = retryAfterSeconds
		return s.notReady(c, p, "not ready: the store is not answering", err)
	}
	if s.ready != nil {
		if err := s.ready(); err != nil {
			return s.notReady(c, problem(http.StatusServiceUnavailable, "not-ready", err.Error()), "not ready: "+err.Error(), nil)
		}
	}
	// The embedder failing degrades search (lexical results only) but the
	// service still answers, so it stays ready and says what is degraded.
	if err := s.embedderHealth(c.Request().Context()); err != nil {
		s.readiness("degraded: query embedding fails; searches answer from lexical retrieval alone", err)
		return c.JSON(http.StatusOK, map[string]any{"status": "degraded", "degraded": []string{"dense"},
			"detail": "query embedding fails, so searches answer from lexical retrieval alone; the log says why", "index": info,
			"encoders": s.engine.Encoders()})
	}
	s.readiness("ready", nil)
	return c.JSON(http.StatusOK, map[string]any{"status": "ready", "degraded": []string{}, "index": info, "encoders": s.engine.Encoders()})
}

// notReady answers a readiness probe 503 with p, logging state only when
// readiness changes (probes come every few seconds; the log needs the
// change, not each probe).
func (s *Server) notReady(c echo.Context, p *wire.Problem, state string, err error) error {
	s.readiness(state, err)
	p.Instance, p.RequestID = c.Request().URL.Path, requestID(c)
	writeProblem(c, p, s.log)
	return nil
}

// readiness logs a change of the service's readiness: WARN when it is
// not ready or degraded, INFO when it is ready again.
func (s *Server) readiness(state string, err error) {
	if prev := s.lastReadiness.Swap(&state); prev != nil && *prev == state {
		return
	}
	if state == "ready" {
		s.log.Info("readiness: ready")
		return
	}
	if err != nil {
		s.log.Warn("readiness: "+state, "error", err)
	} else {
		s.log.Warn("readiness: " + state)
	}
}

func (s *Server) search(c echo.Context) error {
	var req wire.SearchRequest
	if err := s.decode(c, s.maxBody, &req); err != nil {
		return err
	}
	q, err := searchQuery(req)
	if err != nil {
		return err
	}
	res, err := s.runSearch(c.Request().Context(), q)
	if err != nil {
		return err
	}
	return respond(c, res)
}

// runSearch answers a search (over HTTP or MCP); a degraded answer is
// first-hand news for /readyz, sooner than its next probe.
func (s *Server) runSearch(ctx context.Context, q search.Query) (search.Results, error) {
	res, err := s.engine.Search(ctx, q)
	if err == nil && len(res.Degraded) > 0 {
		s.probe.Store(&probeResult{at: time.Now(), err: fmt.Errorf("a search just now answered degraded: %v", res.Degraded)})
	}
	return res, err
}

// limitOf is a request's limit: the default when absent; an explicit 0
// is refused here, since the engine reads 0 as "the default".
func limitOf(limit *int) (int, error) {
	if limit == nil {
		return search.DefaultLimit, nil
	}
	if *limit == 0 {
		return 0, &search.FieldError{Field: "limit", Reason: fmt.Sprintf("must be between 1 and %d", search.MaxLimit)}
	}
	return *limit, search.ValidateLimit(*limit)
}

// searchQuery is the engine's query for a search request (over HTTP or
// MCP), or the problem with the request.
func searchQuery(req wire.SearchRequest) (search.Query, error) {
	limit, err := limitOf(req.Limit)
	if err != nil {
		return search.Query{}, err
	}
	q := search.Query{Text: req.Query, Like: req.Like, Unlike: req.Unlike, Mode: search.Mode(req.Mode),
		Limit: limit, Cursor: req.Cursor, Explain: req.Explain, Aspect: search.Aspect(req.Aspect)}
	if req.Filters != nil {
		q.Filter = *req.Filters
	}
	for _, side := range []struct {
		name string
		ids  []string
	}{{"like", req.Like}, {"unlike", req.Unlike}} {
		for i, id := range side.ids {
			if !papersearch.ValidID(id) {
				return q, invalid("like and unlike must hold paper ids",
					wire.FieldProblem{Pointer: fmt.Sprintf("/%s/%d", side.name, i), Detail: papersearch.ErrBadID.Error()})
			}
		}
	}
	return q, nil
}

func (s *Server) getPaper(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	p, err := getPaper(c.Request().Context(), s.engine, id)
	if err != nil {
		return err
	}
	if exportType(c.Request().Header.Get(echo.HeaderAccept)) == MediaBibTeX {
		return c.Blob(http.StatusOK, MediaBibTeX+"; charset=utf-8", []byte(BibTeX([]papersearch.Hit{{ID: p.ID, Paper: p}})))
	}
	return c.JSON(http.StatusOK, p)
}

func (s *Server) collections(c echo.Context) error {
	for name := range c.QueryParams() {
		return invalid(fmt.Sprintf("unknown parameter %q", name), wire.FieldProblem{Param: name, Detail: "is not a parameter of this request"})
	}
	cs, err := collections(c.Request().Context(), s.engine)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cs)
}

// collections is what GET /v1/collections answers.
func collections(ctx context.Context, engine Engine) (wire.CollectionsResponse, error) {
	cs, err := engine.Collections(ctx)
	if cs == nil {
		cs = []papersearch.Collection{}
	}
	return wire.CollectionsResponse{Collections: cs}, err
}

func (s *Server) similar(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	sq := search.SimilarQuery{ID: id, Limit: search.DefaultLimit, Mode: search.Mode(c.QueryParam("mode")),
		Cursor: c.QueryParam("cursor")}
	params := c.QueryParams()
	for name := range params {
		switch name {
		case "limit", "mode", "cursor", "explain", "year_min", "year_max", "venue", "author", "tag", "aspect", "sentences":
		default:
			return invalid(fmt.Sprintf("unknown parameter %q", name), wire.FieldProblem{Param: name, Detail: "is not a parameter of this request"})
		}
	}
	// A typed parameter given with an empty value is invalid, as its schema
	// says; only strings may be empty.
	for _, p := range []struct {
		name   string
		lo, hi int
		dst    *int
	}{{"limit", 1, search.MaxLimit, &sq.Limit}, {"year_min", papersearch.MinYear, papersearch.MaxYear, &sq.Filter.YearMin},
		{"year_max", papersearch.MinYear, papersearch.MaxYear, &sq.Filter.YearMax}} {
		if !params.Has(p.name) {
			continue
		}
		raw := params.Get(p.name)
		n, err := strconv.Atoi(raw)
		if err != nil || n < p.lo || n > p.hi {
			return invalid(fmt.Sprintf("%s must be an integer between %d and %d", p.name, p.lo, p.hi),
				wire.FieldProblem{Param: p.name, Detail: fmt.Sprintf("must be an integer between %d and %d, got %q", p.lo, p.hi, raw)})
		}
		*p.dst = n
	}
	if params.Has("mode") && sq.Mode == "" {
		return invalid("mode must be hybrid, dense or lexical", wire.FieldProblem{Param: "mode", Detail: "must be hybrid, dense or lexical, got \"\""})
	}
	sq.Filter.Venues = params["venue"]
	sq.Filter.Author = c.QueryParam("author")
	sq.Filter.Tags = params["tag"]
	if params.Has("aspect") {
		switch sq.Aspect = search.Aspect(params.Get("aspect")); sq.Aspect {
		case search.BackgroundAspect, search.MethodAspect, search.ResultAspect:
		default:
			return invalid("aspect must be background, method or result",
				wire.FieldProblem{Param: "aspect", Detail: fmt.Sprintf("must be background, method or result, got %q", sq.Aspect)})
		}
	}
	if params.Has("sentences") {
		raw := params.Get("sentences")
		bad := invalid(fmt.Sprintf("sentences must be a comma-separated list of 1 to %d sentence places, each 0 to %d", search.MaxSentences, search.MaxSentences-1),
			wire.FieldProblem{Param: "sentences", Detail: fmt.Sprintf("must be places such as 0,3, got %q", raw)})
		parts := strings.Split(raw, ",")
		if len(parts) > search.MaxSentences {
			return bad
		}
		sq.Sentences = make([]int, len(parts))
		for i, p := range parts {
			n, err := strconv.Atoi(p)
			if err != nil || n < 0 || n >= search.MaxSentences {
				return bad
			}
			sq.Sentences[i] = n
		}
	}
	if params.Has("explain") {
		switch raw := params.Get("explain"); raw {
		case "true":
			sq.Explain = true
		case "false":
		default:
			return invalid("explain must be true or false", wire.FieldProblem{Param: "explain", Detail: fmt.Sprintf("must be true or false, got %q", raw)})
		}
	}
	res, err := s.engine.Similar(c.Request().Context(), sq)
	if err != nil {
		return asParameterProblem(err)
	}
	return respond(c, res)
}

// asParameterProblem turns an engine's field error about a request made of
// query parameters into a problem naming the parameter, not a JSON pointer.
func asParameterProblem(err error) error {
	var fe *search.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	p := toProblem(err)
	param := strings.TrimPrefix(fe.Field, "filters/")
	switch param {
	case "venues":
		param = "venue"
	case "tags":
		param = "tag"
	}
	p.Errors = []wire.FieldProblem{{Param: param, Detail: fe.Reason}}
	return p
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

// pathID returns the :id path parameter, unescaped and validated. Echo
// routes on the escaped path only when the request's escaping differs from
// Go's default (URL.RawPath set, as for an id with an escaped "/"); then,
// and only then, the parameter is still escaped: unescaping it otherwise
// would turn a literal "%41" in an id into "A".
func pathID(c echo.Context) (string, error) {
	raw := c.Param("id") // one path segment
	if raw == "" {       // more (a DOI's raw slashes): the wildcard route's
		raw = c.Param("*")
		if c.Path() == similarRoute {
			raw = strings.TrimSuffix(raw, "/similar")
		}
	}
	if raw == "" {
		return "", echo.ErrNotFound
	}
	id, err := raw, error(nil)
	if c.Request().URL.RawPath != "" {
		id, err = url.PathUnescape(id)
	}
	if err != nil || !papersearch.ValidID(id) {
		return "", invalid("the paper id in the path is not a valid id",
			wire.FieldProblem{Param: "id", Detail: papersearch.ErrBadID.Error()})
	}
	return papersearch.CanonicalID(id), nil
}

// paperRoute serves GET /v1/papers/{id} and GET /v1/papers/{id}/similar,
// the id raw (its slashes as they are: a DOI's) or percent-encoded; a path
// ending in /similar asks for the similar papers (an id ending in
// "/similar" is written %2Fsimilar). Metrics name the two routes apart.
func (s *Server) paperRoute(c echo.Context) error {
	if strings.HasSuffix(c.Param("*"), "/similar") {
		c.SetPath(similarRoute)
		return s.similar(c)
	}
	c.SetPath(paperRoutePath)
	return s.getPaper(c)
}

// readOnlySimilar answers 405 to a write (h: PATCH or DELETE of
// /v1/papers/*) of a path ending in /similar, which names a paper's
// similar papers, as the router answers for an id of one segment.
func readOnlySimilar(h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if strings.HasSuffix(c.Param("*"), "/similar") {
			c.SetPath(similarRoute)
			c.Response().Header().Set(echo.HeaderAllow, http.MethodGet)
			return echo.ErrMethodNotAllowed
		}
		return h(c)
	}
}

// The routes a paper's path serves, as metrics and pathID name them.
const (
	paperRoutePath = "/v1/papers/:id"
	similarRoute   = "/v1/papers/:id/similar"
)

// BatchBodyFactor is how many times the body limit the batch endpoints
// (POST /v1/papers, POST /v1/embeddings, POST /v1/imports) and PATCH of a
// paper accept: 1,000 real abstracts take about 1.4 MB, and one paper
// within the schema's limits can take megabytes, over the 1 MiB that
// bounds every other body.
const BatchBodyFactor = 16

// readBody reads a JSON request body: at most limit bytes, valid UTF-8, not
// empty. A body that stops arriving gets 408; no problem body ever carries
// the underlying error text (addresses, internals): that goes to the log.
func (s *Server) readBody(c echo.Context, limit int64) ([]byte, error) {
	req := c.Request()
	if ct := req.Header.Get(echo.HeaderContentType); ct != "" && !strings.Contains(ct, "json") &&
		!strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		return nil, problem(http.StatusUnsupportedMediaType, "unsupported-media-type",
			"the request body must be JSON (Content-Type: application/json)")
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), req.Body, limit))
	if err != nil {
		var (
			maxErr *http.MaxBytesError
			netErr net.Error
		)
		switch {
		case errors.As(err, &maxErr):
			return nil, err
		case errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout():
			s.log.Info("request body timed out", "path", req.URL.Path, "request_id", requestID(c), "error", err)
			c.Response().Header().Set(echo.HeaderConnection, "close")
			return nil, problem(http.StatusRequestTimeout, "request-timeout",
				"the request body did not arrive in time; send it again, faster")
		}
		s.log.Info("request body unreadable", "path", req.URL.Path, "request_id", requestID(c), "error", err)
		return nil, problem(http.StatusBadRequest, "unreadable-body", "the request body could not be read to its end")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, problem(http.StatusBadRequest, "malformed-json", "the request body is empty; send a JSON object")
	}
	if !utf8.Valid(body) {
		return nil, problem(http.StatusBadRequest, "invalid-utf8", "the request body is not valid UTF-8")
	}
	return body, nil
}

// decode reads a JSON request body of at most limit bytes strictly: valid
// UTF-8, one JSON value, no unknown or repeated fields, the right types.
func (s *Server) decode(c echo.Context, limit int64, dst any) error {
	body, err := s.readBody(c, limit)
	if err != nil {
		return err
	}
	return decodeStrict(body, dst)
}

// extendWriteDeadline gives a response that waits for n texts to be
// embedded time to be written, beyond the server's write timeout (a large
// batch on the local model can take minutes), and returns the request's
// context bounded to end a little before that deadline, so that the work,
// its retries included, gives up in time for its answer (a 503 with
// Retry-After when a dependency did not answer) to reach the client.
func extendWriteDeadline(c echo.Context, n int) (context.Context, context.CancelFunc) {
	budget := time.Minute + time.Duration(n)*2*time.Second
	_ = http.NewResponseController(c.Response()).SetWriteDeadline(time.Now().Add(budget))
	return context.WithTimeout(c.Request().Context(), budget-answerMargin)
}

// answerMargin is the part of a write's deadline kept for its answer.
const answerMargin = 5 * time.Second

// jsonProblem explains a JSON decoding error, naming the field at fault;
// prefix is the JSON pointer of the decoded value within the request body.
func jsonProblem(err error, prefix string) *wire.Problem {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syn):
		return problem(http.StatusBadRequest, "malformed-json",
			fmt.Sprintf("the request body is not valid JSON at byte %d: %v", syn.Offset, syn))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return problem(http.StatusBadRequest, "malformed-json", "the request body ends in the middle of a JSON value")
	case errors.As(err, &typ):
		want := jsonKind(typ.Type.Kind().String())
		if typ.Field == "" {
			if prefix == "" {
				return invalid("the request body must be "+want,
					wire.FieldProblem{Pointer: "", Detail: fmt.Sprintf("expected %s, got %s", want, typ.Value)})
			}
			return invalid(fmt.Sprintf("%s must be %s, got %s", prefix, want, typ.Value),
				wire.FieldProblem{Pointer: prefix, Detail: fmt.Sprintf("must be %s, got %s", want, typ.Value)})
		}
		pointer := prefix + "/" + strings.ReplaceAll(typ.Field, ".", "/")
		return invalid(fmt.Sprintf("%s must be %s, got %s", strings.TrimPrefix(pointer, "/"), want, typ.Value),
			wire.FieldProblem{Pointer: pointer, Detail: fmt.Sprintf("must be %s, got %s", want, typ.Value)})
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return invalid(fmt.Sprintf("unknown field %q", name),
			wire.FieldProblem{Pointer: prefix + "/" + name, Detail: "is not a field of this request"})
	}
	return problem(http.StatusBadRequest, "malformed-json", "the request body is not valid JSON: "+err.Error())
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int", "int64", "int32", "uint":
		return "an integer"
	case "float64", "float32":
		return "a number"
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	case "bool":
		return "a boolean"
	}
	return goKind
}
