// Package api serves papersearch over HTTP with echo: routes, request
// validation and RFC 9457 problem+json errors.
package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/alerts"
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
	Recommend(ctx context.Context, q search.RecommendQuery) (search.Results, error)
	Map(ctx context.Context, q search.MapQuery) (search.MapView, error)
	// CollectionPapers returns the papers holding a tag, by id.
	CollectionPapers(ctx context.Context, tag string) ([]papersearch.Paper, error)
	// Retag adds and removes tags on papers, stored at once
	// (search.Engine.Retag).
	Retag(ctx context.Context, ids, add, remove []string) ([]papersearch.Paper, error)
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
	alerts      *alerts.Store // nil: no alerts are kept
	watches     *imports.Watches
	mcp         *mcp.Server // the Model Context Protocol server (see MCP)
}

// New returns a Server answering from engine.
func New(engine Engine, opts Options) *Server {
	s := &Server{engine: engine, log: opts.Logger, maxBody: opts.MaxBody, ready: opts.Ready,
		apiKey: opts.APIKey, openWrites: opts.OpenWrites, alerts: opts.Alerts, watches: opts.Watches, tokens: sync.OnceValues(newTokenDecoder), pageCSP: pageCSP(indexHTML),
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
	// Megabytes of columns: compressed for whoever accepts it, at the
	// fastest level (at the default one compressing took 5 times as long as
	// answering).
	e.GET("/v1/map", s.corpusMap, middleware.GzipWithConfig(middleware.GzipConfig{Level: 1}))
	e.GET("/v1/collections", s.collections)
	e.GET("/v1/collections/:tag/recommendations", s.recommendations)
	e.GET("/v1/collections/:tag/feed.atom", s.collectionFeed)
	e.GET("/v1/collections/:tag/papers", s.collectionPapers)
	e.POST("/v1/collections/:tag/papers", s.retag(addToCollection), s.requireKey)
	e.DELETE("/v1/collections/:tag/papers/*", s.retag(removeFromCollection), s.requireKey)
	e.POST("/v1/collections/:tag/not-interested", s.retag(markNotInterested), s.requireKey)
	e.DELETE("/v1/collections/:tag/not-interested/*", s.retag(unmarkNotInterested), s.requireKey)
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
	e.POST("/v1/alerts", s.createAlert, s.requireKey)
	e.GET("/v1/alerts", s.listAlerts, s.requireKey)
	e.GET("/v1/alerts/:id", s.getAlert, s.requireKey)
	e.DELETE("/v1/alerts/:id", s.deleteAlert, s.requireKey)
	e.GET("/v1/alerts/:id/feed.atom", s.alertFeedRoute)
	e.POST("/v1/watches", s.createWatch, s.requireKey)
	e.GET("/v1/watches", s.listWatches, s.requireKey)
	e.GET("/v1/watches/:id", s.getWatch, s.requireKey)
	e.DELETE("/v1/watches/:id", s.deleteWatch, s.requireKey)
	e.POST("/v1/watches/:id/run", s.runWatch, s.requireKey)
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
