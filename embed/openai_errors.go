package embed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"
	openai "github.com/sashabaranov/go-openai"

	"github.com/papersearch/papersearch/internal/retryafter"
)

// errRedirect is an endpoint's answer that redirects the request
// elsewhere, which is not followed.
var errRedirect = errors.New("the embedding endpoint answered with a redirect")

// classify turns a failed attempt into a retryable error, a RetryAfter
// error, or a permanent error that says what to fix.
func (c *OpenAI) classify(err error, retryAfter string) error {
	var (
		apiErr *openai.APIError
		reqErr *openai.RequestError
		status int
		msg    string
	)
	switch {
	case errors.Is(err, ErrTooLarge):
		// A retry would read as much again.
		return backoff.Permanent(fmt.Errorf("%w: %s: %w", ErrEndpoint, c.cfg.BaseURL, err))
	case errors.Is(err, errRedirect):
		return backoff.Permanent(fmt.Errorf("%w: %s: %w (texts and the API key are not sent on: configure the address it names, if it is to be trusted)",
			ErrEndpoint, c.cfg.BaseURL, err))
	case errors.As(err, &apiErr):
		status, msg = apiErr.HTTPStatusCode, apiErr.Message
	case errors.As(err, &reqErr):
		status, msg = reqErr.HTTPStatusCode, strings.TrimSpace(string(reqErr.Body))
		if msg == "" && reqErr.Err != nil {
			msg = reqErr.Err.Error()
		}
	default:
		// Connection refused or reset, timeouts, truncated or malformed bodies.
		var netErr net.Error
		if errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%w: %s unreachable: %w", ErrEndpoint, c.cfg.BaseURL, err)
		}
		return fmt.Errorf("%w: %w", ErrEndpoint, err)
	}
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	wrapped := fmt.Errorf("%w: HTTP %d from %s: %s", ErrEndpoint, status, c.cfg.BaseURL, msg)
	switch {
	case status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500 && !tooLongMessage(msg):
		if d, ok := retryafter.Parse(retryAfter, time.Now()); ok {
			return fmt.Errorf("%w (Retry-After %s): %w", wrapped, d, &backoff.RetryAfterError{Duration: d})
		}
		return wrapped
	case tooLongMessage(msg) || status == http.StatusRequestEntityTooLarge:
		return backoff.Permanent(fmt.Errorf("%w: %w", errTooLong, wrapped))
	case status == http.StatusUnauthorized:
		return backoff.Permanent(fmt.Errorf("%w: %w", wrapped, ErrAPIKey))
	case status == http.StatusForbidden:
		return backoff.Permanent(fmt.Errorf("%w (the API key may not use model %q)", wrapped, c.cfg.Model))
	case status == http.StatusNotFound:
		return backoff.Permanent(fmt.Errorf("%w: model %q: %w", wrapped, c.cfg.Model, ErrModelNotServed))
	}
	return backoff.Permanent(wrapped)
}

// tooLongMessage recognises the ways servers say an input is too long.
func tooLongMessage(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{"maximum context length", "too long", "too large", "context length", "input length", "exceeds the max", "token limit", "must have less than"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

type retryAfterKey struct{}

// retryAfterTransport records each response's Retry-After header in the
// slot its request's context carries, which go-openai does not surface.
type retryAfterTransport struct{ base http.RoundTripper }

func (t retryAfterTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if resp != nil {
		if slot, ok := req.Context().Value(retryAfterKey{}).(*string); ok {
			*slot = resp.Header.Get("Retry-After")
		}
	}
	return resp, err
}
