package api

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/alerts"
	"github.com/papersearch/papersearch/atlas/corpusmap"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/catalog/imports"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/storage"
)

// Engine is what the server needs from the search engine.
type Engine interface {
	Search(ctx context.Context, q search.Query) (search.Results, error)
	// RelevanceFloor is the least dense cosine similarity at which a paper
	// answers the search that gave res (search.Engine.RelevanceFloor).
	RelevanceFloor(res search.Results) (float32, bool)
	Similar(ctx context.Context, q search.SimilarQuery) (search.Results, error)
	Get(ctx context.Context, id string) (papersearch.Paper, error)
	Collections(ctx context.Context) ([]papersearch.Collection, error)
	Recommend(ctx context.Context, q search.RecommendQuery) (search.Results, error)
	// CollectionPapers returns the papers holding a tag, by id.
	CollectionPapers(ctx context.Context, tag string) ([]papersearch.Paper, error)
	Index(ctx context.Context) (papersearch.IndexInfo, error)
	// Ping reports whether the store answers now, from no cache.
	Ping(ctx context.Context) error
	// Models lists the models Embed answers for, the index's first.
	Models() []embed.ModelInfo
	// Encoders says what each local model's dense layers compute in.
	Encoders() map[string]embed.Choice
	// Embed embeds texts as given with the named model ("": the index's).
	Embed(ctx context.Context, model string, texts []string) ([][]float32, int, error)
}

// Catalog is what the server needs to change the papers: the write side
// (catalog.Catalog), its one way in.
type Catalog interface {
	// Add stores a batch of papers through the one pipeline, each work
	// once, whole or not at all (catalog.Catalog.Add).
	Add(ctx context.Context, papers []papersearch.Paper, opts catalog.AddOptions) (catalog.AddSummary, error)
	// Update replaces a stored paper with an edit of it, keeping its id
	// (catalog.Catalog.Update).
	Update(ctx context.Context, p papersearch.Paper) (papersearch.Paper, error)
	// Retag adds and removes tags on papers, stored at once
	// (catalog.Catalog.Retag).
	Retag(ctx context.Context, ids, add, remove []string) ([]papersearch.Paper, error)
	Import(ctx context.Context, src catalog.Source, opts catalog.ImportOptions) (catalog.ImportSummary, error)
	Delete(ctx context.Context, id string) error
}

// Mapper serves the map of the corpus (corpusmap.Keeper).
type Mapper interface {
	Map(ctx context.Context, q corpusmap.Query) (corpusmap.View, error)
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
	// Settled, if set, is closed once the store holds what the service
	// starts with (an empty store's seeding has ended). Until then the MCP
	// tools and resources, and the HTTP reads of the papers, wait for it,
	// up to SettleWait (reads: at most settleReadWait), and then answer
	// that the service is indexing, with Ready's words: a first question
	// would otherwise find an empty store.
	Settled <-chan struct{}
	// SettleWait bounds that wait; 0 means DefaultSettleWait.
	SettleWait time.Duration
	// APIKey, if set, is the bearer token the write endpoints require.
	APIKey string
	// OpenWrites allows writes without a key from loopback clients; set it
	// only when the service listens on loopback. A client that reaches it
	// through a trusted proxy is judged by its own address (Trust).
	OpenWrites bool
	// Trust says which Host values the service answers for, its public URL
	// and which proxies' forwarding headers name the client (NewTrust); the
	// zero value answers loopback names only and trusts no proxy.
	Trust Trust
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
	// Map, if set, serves the map of the corpus (corpusmap.Keeper, which
	// the caller keeps: Keep); without it GET /v1/map answers 501.
	Map Mapper
	// Importer, if set, opens the sources of POST /v1/imports
	// (imports.Config.Open); without it imports answer 501.
	Importer imports.Opener
	// Records, if set, is the store's keeping of the service's state: the
	// import jobs are kept there, so every instance on the store answers
	// and cancels them.
	Records storage.Records
	// Alerts, if set, keeps the saved searches of /v1/alerts; without it
	// making one answers 501.
	Alerts *alerts.Store
	// Watches, if set, are the watched sources /v1/watches keeps; the
	// caller runs them (imports.Watches.Run). Without it making one
	// answers 501.
	Watches *imports.Watches
}

// Server is the HTTP API. It implements http.Handler.
type Server struct {
	echo       *echo.Echo
	engine     Engine
	catalog    Catalog
	log        *slog.Logger
	maxBody    int64
	ready      func() error
	settled    <-chan struct{} // see Options.Settled
	settleWait time.Duration
	apiKey     string
	openWrites bool
	trust      Trust
	// crossOrigin refuses browsers' cross-origin writes (see guard).
	crossOrigin *http.CrossOriginProtection
	// warnedProxy is set once the log has said that forwarding headers
	// arrive from a proxy not trusted.
	warnedProxy atomic.Bool
	// keyed holds the routes ("METHOD /path") under the key rule.
	keyed map[string]bool
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
	maps        Mapper        // nil: the map answers 501
	imports     *imports.Jobs // nil: imports answer 501
	alerts      *alerts.Store // nil: no alerts are kept
	watches     *imports.Watches
	mcp         *mcp.Server // the Model Context Protocol server (see MCP)
}

// New returns a Server answering from engine and changing papers through
// cat.
func New(engine Engine, cat Catalog, opts Options) *Server {
	s := &Server{engine: engine, catalog: cat, log: opts.Logger, maxBody: opts.MaxBody, ready: opts.Ready, settled: opts.Settled, settleWait: opts.SettleWait,
		apiKey: opts.APIKey, openWrites: opts.OpenWrites, trust: opts.Trust, crossOrigin: opts.Trust.crossOrigin(),
		keyed: map[string]bool{}, maps: opts.Map, alerts: opts.Alerts, watches: opts.Watches, tokens: sync.OnceValues(newTokenDecoder), pageCSP: pageCSP(indexHTML),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if opts.Importer != nil {
		s.imports = imports.NewJobs(cat, opts.Importer, s.log)
		s.imports.Records = opts.Records
	}
	if opts.EmbedTokens.Rate > 0 {
		s.embedTokens = newTokenMeter(opts.EmbedTokens)
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBody
	}
	doc, err := openAPIFor(engine.Models(), s.apiKey == "" && s.openWrites)
	if err != nil {
		panic(err) // the embedded document is broken: a build defect, caught by every test
	}
	s.openAPI = doc
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.errorHandler
	// Every client address (logs, rate limits, the key rule) is the peer's
	// or, through a trusted proxy, the one it forwards.
	e.IPExtractor = func(r *http.Request) string { return s.trust.clientAddr(r).String() }
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
	e.Use(middleware.RequestIDWithConfig(middleware.RequestIDConfig{Generator: rand.Text, RequestIDHandler: func(c echo.Context, id string) {
		if !clientRequestID(id) {
			// The client's id is a claim: echoed into every log line and
			// problem, only a short token is kept.
			c.Response().Header().Set(echo.HeaderXRequestID, rand.Text())
		}
	}}))
	e.Use(s.observe(metrics))
	e.Use(s.guard)
	// get serves a resource to GET and to HEAD, the same answer without
	// its body (RFC 9110 §9.3.2; net/http drops a HEAD answer's body and
	// keeps its Content-Length), for monitors, link checkers and feed
	// readers; the 405 of another method lists both in Allow.
	get := func(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) {
		e.Match([]string{http.MethodGet, http.MethodHead}, path, h, m...)
	}
	get("/metrics", metrics.handler())
	if opts.RateLimit.Rate > 0 {
		// A write the key rule refuses is answered 401 or 403 by it, not
		// 429: an unauthenticated client learns why first.
		e.Use(newLimiter(opts.RateLimit, s.refusedWrite).middleware)
	}
	e.Use(s.recoverPanics)

	// keyed routes are under the key rule (requireKey), and the limiter
	// knows them.
	keyed := func(method, path string, h echo.HandlerFunc) {
		methods := []string{method}
		if method == http.MethodGet {
			methods = append(methods, http.MethodHead)
		}
		for _, m := range methods {
			s.keyed[m+" "+path] = true
		}
		e.Match(methods, path, h, s.requireKey)
	}
	get("/", s.page)
	get("/openapi.json", s.openapi)
	get("/healthz", s.healthz)
	get("/readyz", s.readyz)
	e.POST("/v1/search", s.search, s.settledRead)
	// A paper's id may hold slashes (a DOI, doi:10.1109/jproc.2021.3058954),
	// raw or percent-encoded: an id of one path segment takes the routes
	// that name it, one with raw slashes the rest of the path (see
	// paperRoute).
	// Megabytes of columns: compressed for whoever accepts it, at the
	// fastest level (at the default one compressing took 5 times as long as
	// answering).
	get("/v1/map", s.corpusMap, s.settledRead, middleware.GzipWithConfig(middleware.GzipConfig{Level: 1}))
	get("/v1/collections", s.collections, s.settledRead)
	get("/v1/collections/:tag/recommendations", s.recommendations, s.settledRead)
	get("/v1/collections/:tag/feed.atom", s.collectionFeed, s.settledRead)
	get("/v1/collections/:tag/papers", s.collectionPapers, s.settledRead)
	keyed(http.MethodPost, "/v1/collections/:tag/papers", s.retag(addToCollection))
	keyed(http.MethodDelete, "/v1/collections/:tag/papers/*", s.retag(removeFromCollection))
	keyed(http.MethodPost, "/v1/collections/:tag/not-interested", s.retag(markNotInterested))
	keyed(http.MethodDelete, "/v1/collections/:tag/not-interested/*", s.retag(unmarkNotInterested))
	get("/v1/papers/:id", s.getPaper, s.settledRead)
	get("/v1/papers/:id/similar", s.similar, s.settledRead)
	get("/v1/papers/*", s.paperRoute, s.settledRead)
	if opts.ProtectEmbeddings {
		keyed(http.MethodPost, embeddingsPath, s.embeddings)
	} else {
		e.POST(embeddingsPath, s.embeddings)
	}
	get(modelsPath, s.listModels)
	get(modelsPath+"/*", s.getModel)
	keyed(http.MethodPost, "/v1/papers", s.ingest)
	keyed(http.MethodPatch, "/v1/papers/:id", s.patchPaper)
	keyed(http.MethodPatch, "/v1/papers/*", readOnlySimilar(s.patchPaper))
	keyed(http.MethodDelete, "/v1/papers/:id", s.deletePaper)
	keyed(http.MethodDelete, "/v1/papers/*", readOnlySimilar(s.deletePaper))
	// The Model Context Protocol's streamable HTTP transport, sessionless:
	// every request stands alone, as the REST routes do.
	s.mcp = newMCP(s)
	mcpBody := BatchBodyFactor * s.maxBody // an import's file, as POST /v1/imports takes it
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true, Logger: s.log,
			DisableLocalhostProtection: true, // guard checks Host for every route, this one too
			MaxRequestBodyBytes:        mcpBody})
	e.Any(mcpPath, s.plainErrorsAsProblems(singleMessages(mcpHandler), mcpBody))
	keyed(http.MethodPost, "/v1/imports", s.startImport)
	keyed(http.MethodGet, "/v1/imports/:id", s.importStatus)
	keyed(http.MethodPost, "/v1/imports/:id/cancel", s.cancelImport)
	keyed(http.MethodPost, "/v1/alerts", s.createAlert)
	keyed(http.MethodGet, "/v1/alerts", s.listAlerts)
	keyed(http.MethodGet, "/v1/alerts/:id", s.getAlert)
	keyed(http.MethodDelete, "/v1/alerts/:id", s.deleteAlert)
	get("/v1/alerts/:id/feed.atom", s.alertFeedRoute, s.settledRead)
	keyed(http.MethodPost, "/v1/watches", s.createWatch)
	keyed(http.MethodGet, "/v1/watches", s.listWatches)
	keyed(http.MethodGet, "/v1/watches/:id", s.getWatch)
	keyed(http.MethodDelete, "/v1/watches/:id", s.deleteWatch)
	keyed(http.MethodPost, "/v1/watches/:id/run", s.runWatch)
	s.echo = e
	return s
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.echo.ServeHTTP(w, r) }

func requestID(c echo.Context) string { return c.Response().Header().Get(echo.HeaderXRequestID) }

// clientRequestID reports whether an X-Request-Id is one this service
// takes from a client: 1 to 128 of A-Z, a-z, 0-9 and . _ : -, the
// characters of UUIDs, W3C trace ids and the ids proxies make.
func clientRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._:-", r)) {
			return false
		}
	}
	return true
}

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
				s.log.Info("request", "method", methodName(req.Method), "path", req.URL.Path, "status", c.Response().Status,
					"bytes", c.Response().Size, "duration_ms", float64(took.Microseconds())/1000,
					"request_id", requestID(c), "remote", c.RealIP())
			}
			return nil
		}
	}
}
