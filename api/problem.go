package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/alerts"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/atlas/corpusmap"
	"github.com/papersearch/papersearch/catalog/imports"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/embedding"
	"github.com/papersearch/papersearch/search/storage"
)

// problem builds a Problem with a type and title derived from the status.
func problem(status int, slug, detail string) *wire.Problem {
	return &wire.Problem{Type: wire.ProblemType + slug, Title: titleFor(status, slug), Status: status, Detail: detail}
}

func titleFor(status int, slug string) string {
	switch slug {
	case "invalid-request":
		return "Invalid request"
	case "malformed-json":
		return "Malformed JSON"
	}
	// Every title in one style, sentence case: "Not found", "Too many
	// requests" (http.StatusText capitalises each word).
	text := http.StatusText(status)
	if text == "" {
		return "Error"
	}
	return text[:1] + strings.ToLower(text[1:])
}

// retryAfterSeconds is the Retry-After of a 503: about how long a
// restarted dependency or a reopened circuit breaker takes.
const retryAfterSeconds = 5

// invalid is a 400 problem listing field errors.
func invalid(detail string, fields ...wire.FieldProblem) *wire.Problem {
	p := problem(http.StatusBadRequest, "invalid-request", detail)
	p.Errors = fields
	return p
}

// fieldDetail is what a field problem says of its field: the rule it
// breaks.
func fieldDetail(fe *papersearch.FieldError) string {
	if fe.Reason != "" {
		return fe.Reason
	}
	return fe.Err.Error()
}

// sentinel is how an error a handler returns is answered when it wraps
// err: its status and problem type, its Retry-After in seconds (0: none)
// and, when detail is set, that detail instead of the error's own text
// (hint is added to the error's text otherwise).
type sentinel struct {
	err        error
	status     int
	slug       string
	retryAfter int
	detail     string
	hint       string
}

// sentinels is the one table of the errors the service answers by
// sentinel, the first that an error wraps deciding (read-only). Errors of
// other kinds (a *wire.Problem, a field error, a body too large, a model
// of another dimension, an echo error) are toProblem's own cases.
var sentinels = []sentinel{
	{err: alerts.ErrNotFound, status: http.StatusNotFound, slug: "alert-not-found"},
	{err: alerts.ErrTooMany, status: http.StatusConflict, slug: "too-many-alerts"},
	{err: imports.ErrTooMany, status: http.StatusTooManyRequests, slug: "too-many-imports", retryAfter: 10},
	{err: imports.ErrNoJob, status: http.StatusNotFound, slug: "import-not-found"},
	{err: imports.ErrJobEnded, status: http.StatusConflict, slug: "import-ended"},
	{err: imports.ErrNoWatch, status: http.StatusNotFound, slug: "watch-not-found"},
	{err: imports.ErrTooManyWatches, status: http.StatusConflict, slug: "too-many-watches"},
	{err: storage.ErrNotFound, status: http.StatusNotFound, slug: "not-found"},
	{err: search.ErrEmptyCollection, status: http.StatusNotFound, slug: "empty-collection",
		hint: ": add papers to it first (POST /v1/collections/{tag}/papers, or a paper's tags)"},
	{err: storage.ErrNoSentences, status: http.StatusNotImplemented, slug: "not-implemented",
		detail: "aspect and sentence similarity need sentence vectors, which this Qdrant collection does not keep (it was created before they were); reindex into a new collection"},
	{err: corpusmap.ErrNotReady, status: http.StatusServiceUnavailable, slug: "map-not-ready", retryAfter: 2 * retryAfterSeconds,
		hint: "; the map is laid out in the background (about a minute for 30,000 papers): retry shortly"},
	{err: storage.ErrUnavailable, status: http.StatusServiceUnavailable, slug: "unavailable", retryAfter: retryAfterSeconds,
		detail: "a service this one depends on (the vector store or the embedding endpoint) is unavailable; retry shortly"},
	{err: context.DeadlineExceeded, status: http.StatusServiceUnavailable, slug: "timeout", retryAfter: retryAfterSeconds,
		detail: "the request took too long; try again"},
	{err: context.Canceled, status: 499, slug: "canceled", detail: "the client closed the request"},
	// After ErrUnavailable: an endpoint whose retries ran out is away for
	// now (503, Retry-After); one that refused or answered nonsense will
	// not mend by waiting. Its own text (its URL, its message) stays in
	// the log.
	{err: embed.ErrEndpoint, status: http.StatusBadGateway, slug: "embedding-endpoint-failed",
		detail: "the embedding endpoint refused or failed the request; the server's log says why, under this request's id"},
	{err: embed.ErrBadResponse, status: http.StatusBadGateway, slug: "embedding-endpoint-failed",
		detail: "the embedding endpoint's answer was not embeddings of the texts sent; the server's log says why, under this request's id"},
}

// toProblem maps any error a handler returns to the problem the client sees.
func toProblem(err error) *wire.Problem {
	var (
		p      *wire.Problem
		he     *echo.HTTPError
		fe     *papersearch.FieldError
		maxErr *http.MaxBytesError
		tle    *embedding.TokenLimitError
		dim    *embed.DimensionError
	)
	switch {
	case errors.As(err, &p):
		return p
	case errors.As(err, &fe):
		field := wire.FieldProblem{Pointer: "/" + fe.Field, Detail: fieldDetail(fe)}
		if errors.Is(fe, storage.ErrNotFound) {
			p := problem(http.StatusNotFound, "not-found", fe.Error())
			p.Errors = []wire.FieldProblem{field}
			return p
		}
		return invalid(fe.Error(), field)
	case errors.As(err, &tle):
		return embeddingProblem(http.StatusBadRequest, "max_tokens_per_request", "input", tle.Error())
	case errors.As(err, &maxErr):
		return problem(http.StatusRequestEntityTooLarge, "body-too-large",
			fmt.Sprintf("the request body exceeds %d bytes", maxErr.Limit))
	case errors.As(err, &dim):
		// Before ErrUnavailable: an open breaker's refusal names the failure
		// that opened it, and this one waiting will not mend.
		return problem(http.StatusBadGateway, "embedding-model-mismatch",
			dim.Error()+"; the endpoint must serve the index's model, or the index be rebuilt under the new one (papersearch reindex)")
	}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			detail := s.detail
			if detail == "" {
				detail = err.Error() + s.hint
			}
			p := problem(s.status, s.slug, detail)
			p.RetryAfter = s.retryAfter
			return p
		}
	}
	if errors.As(err, &he) {
		status := he.Code
		detail := http.StatusText(status)
		if m, ok := he.Message.(string); ok {
			detail = m
		}
		slug := strings.ReplaceAll(strings.ToLower(http.StatusText(status)), " ", "-")
		if status == http.StatusNotFound {
			slug = "not-found"
		}
		return problem(status, slug, detail)
	}
	return problem(http.StatusInternalServerError, "internal", "an internal error occurred; it has been logged")
}

// errorHandler is echo's error handler: every error becomes problem+json.
func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	p := toProblem(err)
	switch {
	case p.Status == http.StatusServiceUnavailable:
		s.log.Warn("request failed: a dependency is unavailable", "method", methodName(c.Request().Method), "path", c.Request().URL.Path,
			"request_id", requestID(c), "error", err)
	case p.Status >= http.StatusInternalServerError:
		s.log.Error("request failed", "method", methodName(c.Request().Method), "path", c.Request().URL.Path,
			"request_id", requestID(c), "error", err)
	}
	p.Instance = c.Request().URL.EscapedPath() // a URI reference (RFC 9457), not the decoded path
	p.RequestID = requestID(c)
	if p.OpenAI == nil && isOpenAIPath(c.Request().URL.Path) {
		// Whatever layer raised it (router, body limit, decoder, handler),
		// an error of the OpenAI-compatible route carries OpenAI's error
		// object, so OpenAI client libraries can report it.
		p.OpenAI = openAIErrorOf(p)
	}
	writeProblem(c, p, s.log)
}

func writeProblem(c echo.Context, p *wire.Problem, log *slog.Logger) {
	if p.RetryAfter > 0 {
		c.Response().Header().Set(echo.HeaderRetryAfter, strconv.Itoa(p.RetryAfter))
	}
	body, err := json.Marshal(p)
	if err != nil {
		log.Error("encode problem", "error", err)
		body = []byte(`{"type":"about:blank","title":"Internal Server Error","status":500}`)
	}
	if c.Request().Method == http.MethodHead {
		c.Response().Header().Set(echo.HeaderContentType, "application/problem+json")
		c.Response().WriteHeader(p.Status)
		return
	}
	if err := c.Blob(p.Status, "application/problem+json", body); err != nil {
		log.Debug("write problem", "error", err)
	}
}

// plainErrorsAsProblems serves h (another library's handler, the MCP
// SDK's) under the rules every route keeps: a POST's body is read as
// readBody reads one (at most limit bytes, refused at once when declared
// longer, 408 when it stops arriving) before h sees it, and each
// plain-text error h answers (http.Error's) is a problem+json body like
// every other, its text the detail below 500 and in the log at 500 and
// above; anything else it writes passes through as it writes it, streams
// included.
func (s *Server) plainErrorsAsProblems(h http.Handler, limit int64) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.Method == http.MethodPost {
			body, err := s.readBody(c, limit)
			if err != nil {
				return err
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		w := &plainErrors{ResponseWriter: c.Response()}
		h.ServeHTTP(w, req)
		if w.status == 0 {
			return nil
		}
		c.Response().Header().Del(echo.HeaderContentType) // http.Error's text/plain
		detail := strings.TrimSpace(w.detail.String())
		if w.status >= http.StatusInternalServerError {
			s.log.Error("mcp transport", "status", w.status, "error", detail, "request_id", requestID(c))
			return echo.NewHTTPError(w.status) // its detail says no more than its status
		}
		return echo.NewHTTPError(w.status, detail)
	}
}

// plainErrors holds back a plain-text error's status and text (its first
// KiB) for plainErrorsAsProblems, unless the answer has begun (a stream's
// headers are sent): then everything passes through.
type plainErrors struct {
	http.ResponseWriter
	status int  // of the error held back; 0 when none is
	begun  bool // a status went through
	detail bytes.Buffer
}

func (w *plainErrors) WriteHeader(code int) {
	if !w.begun && code >= 400 && strings.HasPrefix(w.Header().Get(echo.HeaderContentType), "text/plain") {
		w.status = code
		return
	}
	w.begun = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *plainErrors) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.begun = true
		return w.ResponseWriter.Write(p)
	}
	w.detail.Write(p[:min(len(p), max(0, 1024-w.detail.Len()))])
	return len(p), nil
}

// Flush flushes a stream; nothing while an error is held back.
func (w *plainErrors) Flush() {
	if w.status == 0 {
		_ = http.NewResponseController(w.ResponseWriter).Flush()
	}
}

// Unwrap is for http.ResponseController.
func (w *plainErrors) Unwrap() http.ResponseWriter { return w.ResponseWriter }
