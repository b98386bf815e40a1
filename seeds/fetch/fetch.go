// Package fetch is how papersearch reads a paper source over HTTP (the
// arXiv, OpenReview and OpenAlex APIs) with the discipline of its
// embedding client: a timeout per request, a rate limit per source,
// retries with exponential backoff for failures that may pass (network
// errors, 429, 5xx), Retry-After honoured, each answer capped at
// MaxPageBytes, and an error naming the source when it refuses.
package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"
	"golang.org/x/time/rate"

	"github.com/papersearch/papersearch/internal/limitbody"
	"github.com/papersearch/papersearch/internal/retryafter"
)

// MaxPageBytes caps one answer of a source, counted after decompression:
// 32 MiB. The largest page asked for is small beside it: 200 arXiv
// entries of the longest records of the shared ML corpus make 0.78 MB of
// Atom (0.5 MB for 200 ordinary ones), 1000 OpenReview notes a few MB; a
// page of 200 arXiv entries of 1,800 authors each still fits. A hostile
// or broken source's answer (a 600 KB gzip page that inflates to 600 MiB
// took the process from 15 MB to 3.4 GB) is refused at the cap.
const MaxPageBytes = 32 << 20

// ErrTooLarge wraps an answer over MaxPageBytes: Get refuses it without
// retrying, naming the source and the URL.
var ErrTooLarge = limitbody.ErrTooLarge

// ErrRefused wraps an answer that retrying cannot change (a 4xx other than
// 408 and 429): the request is wrong, or the source will not serve it.
var ErrRefused = errors.New("the source refused the request")

// Client fetches from one source. It is safe for concurrent use; make it
// with New.
type Client struct {
	// Source names the source in errors and logs ("OpenReview").
	Source string
	// HTTP is the client used; nil means one with a 60 s timeout.
	HTTP *http.Client
	// MaxElapsed bounds the retries of one request (default 2 minutes).
	MaxElapsed time.Duration
	// UserAgent is sent with every request; some sources ask for a contact.
	UserAgent string
	// Log, if set, is told of each retry.
	Log *slog.Logger

	limiter *rate.Limiter
}

// New returns a client of source that leaves at least every between two
// requests (arXiv asks for 3 s; 0 means no limit).
func New(source string, every time.Duration) *Client {
	limit := rate.Inf
	if every > 0 {
		limit = rate.Every(every)
	}
	return &Client{Source: source, limiter: rate.NewLimiter(limit, 1)}
}

// Get fetches url and hands the body of a 200 answer to read, which ends
// in an error wrapping ErrTooLarge past MaxPageBytes; other answers are
// retried or refused as the package says.
func (c *Client) Get(ctx context.Context, url string, read func(io.Reader) error) error {
	httpc := &http.Client{Timeout: 60 * time.Second}
	if c.HTTP != nil {
		cp := *c.HTTP
		httpc = &cp
	}
	httpc.CheckRedirect = sameHost
	httpc.Transport = limitbody.Transport{Base: httpc.Transport, Limit: MaxPageBytes}
	maxElapsed := c.MaxElapsed
	if maxElapsed <= 0 {
		maxElapsed = 2 * time.Minute
	}
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		if err := c.limiter.Wait(ctx); err != nil {
			return struct{}{}, backoff.Permanent(err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return struct{}{}, backoff.Permanent(err)
		}
		if c.UserAgent != "" {
			req.Header.Set("User-Agent", c.UserAgent)
		}
		resp, err := httpc.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return struct{}{}, backoff.Permanent(ctx.Err())
			}
			if errors.Is(err, errRedirect) {
				return struct{}{}, backoff.Permanent(fmt.Errorf("%w: %s: %w", ErrRefused, c.Source, err))
			}
			var dns *net.DNSError
			if errors.As(err, &dns) && !dns.IsTimeout {
				// No such host, or no resolver to ask (no network): a
				// retry within minutes will not find one.
				return struct{}{}, backoff.Permanent(fmt.Errorf("%w: %s: %w", ErrUnreachable, c.Source, err))
			}
			return struct{}{}, fmt.Errorf("%s unreachable: %w", c.Source, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			if err := read(resp.Body); err != nil {
				return struct{}{}, backoff.Permanent(fmt.Errorf("%s: read the answer to %s: %w", c.Source, url, err))
			}
			return struct{}{}, nil
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		answer := fmt.Errorf("%s: HTTP %d for %s: %s", c.Source, resp.StatusCode, url, strings.TrimSpace(string(body)))
		switch {
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode >= 500:
			if d, ok := retryafter.Parse(resp.Header.Get("Retry-After"), time.Now()); ok {
				return struct{}{}, fmt.Errorf("%w (Retry-After %s): %w", answer, d, &backoff.RetryAfterError{Duration: d})
			}
			return struct{}{}, answer
		default:
			return struct{}{}, backoff.Permanent(fmt.Errorf("%w: %w", ErrRefused, answer))
		}
	}, backoff.WithMaxElapsedTime(maxElapsed), backoff.WithBackOff(backoff.NewExponentialBackOff()),
		backoff.WithNotify(func(err error, wait time.Duration) {
			if c.Log != nil {
				c.Log.Warn("fetch failed; retrying", "source", c.Source, "error", err, "wait", wait.Round(time.Millisecond))
			}
		}))
	return err
}

// errRedirect is a redirect to another host than the one asked, which
// Get does not follow: a source's answer cannot send it to another
// address (an internal one, say).
var errRedirect = errors.New("redirected to another host")

// ErrUnreachable wraps a failure that retrying will not mend soon: the
// source's host name does not resolve, or there is no resolver to ask.
var ErrUnreachable = errors.New("the source cannot be reached")

// sameHost follows up to 10 redirects within the host of the first
// request, scheme and port included.
func sameHost(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if first := via[0].URL; req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return fmt.Errorf("%w: %s answered with a redirect to %s", errRedirect, first.Host, req.URL.Host)
	}
	return nil
}

// GetJSON fetches url as Get does and decodes the body of a 200 answer into v.
func (c *Client) GetJSON(ctx context.Context, url string, v any) error {
	return c.Get(ctx, url, func(body io.Reader) error { return json.NewDecoder(body).Decode(v) })
}
