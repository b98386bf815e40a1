package embed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
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

// check validates a response against its request and returns the vectors
// in input order, normalised.
func (c *OpenAI) check(resp openai.EmbeddingResponse, n int) ([][]float32, error) {
	if len(resp.Data) != n {
		return nil, fmt.Errorf("%w: %d embeddings for %d inputs", ErrBadResponse, len(resp.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, fmt.Errorf("%w: index %d is out of range or repeated", ErrBadResponse, d.Index)
		}
		if c.dim == 0 && (len(d.Embedding) == 0 || len(d.Embedding) != len(resp.Data[0].Embedding)) {
			// Learning the dimension: the vectors disagree among themselves.
			return nil, backoff.Permanent(fmt.Errorf("%w: embedding %d has %d dimensions, embedding 0 %d",
				ErrBadResponse, d.Index, len(d.Embedding), len(resp.Data[0].Embedding)))
		}
		if c.dim != 0 && len(d.Embedding) != c.dim {
			// A wrong dimension is a configuration problem; retrying cannot help.
			return nil, backoff.Permanent(fmt.Errorf("%w: embedding %d: %w",
				ErrBadResponse, d.Index, &DimensionError{Model: c.cfg.Model, Got: len(d.Embedding), Want: c.dim}))
		}
		if !slices.ContainsFunc(d.Embedding, func(x float32) bool { return x != 0 }) {
			// No direction: every cosine with it 0, whatever the text.
			return nil, fmt.Errorf("%w: embedding %d is all zeros", ErrBadResponse, d.Index)
		}
		v := append([]float32(nil), d.Embedding...)
		Normalize(v)
		out[d.Index] = v
	}
	return out, nil
}
