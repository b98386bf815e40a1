package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/papersearch/papersearch/api/wire"
)

// requireKey guards write endpoints (see authorize).
func (s *Server) requireKey(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if p := s.authorize(c.Request().Context(), c.Request().Header); p != nil {
			if p.Status == http.StatusUnauthorized {
				c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="papersearch"`)
			}
			return p
		}
		return next(c)
	}
}

// refusedWrite reports whether the key rule refuses the request's route:
// the limiter lets such a request through to be answered 401 or 403.
func (s *Server) refusedWrite(c echo.Context) bool {
	r := c.Request()
	return s.keyed[r.Method+" "+c.Path()] && s.authorize(r.Context(), r.Header) != nil
}

// authorize says why a request with header h, from the client guard
// stored in ctx, may not write, or nil when it may: with a key configured,
// it must carry "Authorization: Bearer <key>" (compared in constant time);
// without one, writes are allowed only when the service listens on
// loopback (OpenWrites) and the client is on this machine, connecting
// directly (client.local): a request a trusted proxy forwards needs the
// key, whatever address its header names. A context that
// came through no HTTP request (MCP over stdio) has the local user as its
// client. The write routes and the MCP tools that write apply it.
func (s *Server) authorize(ctx context.Context, h http.Header) *wire.Problem {
	if s.apiKey == "" {
		if !s.openWrites {
			return problem(http.StatusForbidden, "writes-disabled",
				"this endpoint needs the API key (writes, and reading imports, alerts and watches), and the server has none configured while it listens beyond loopback: set PAPERSEARCH_API_KEY")
		}
		if c, ok := clientFrom(ctx); ok && !c.local() {
			return problem(http.StatusForbidden, "writes-disabled",
				"without an API key only clients on this machine, connecting directly, may write; this request came through a trusted proxy: set PAPERSEARCH_API_KEY")
		}
		return nil
	}
	if n := len(h.Values(echo.HeaderAuthorization)); n > 1 {
		// Not a list field (RFC 9110 §5.3): which one a proxy or this
		// server would read is anyone's guess.
		return problem(http.StatusBadRequest, "invalid-request", fmt.Sprintf("send one Authorization header, not %d", n))
	}
	want := sha256.Sum256([]byte(s.apiKey))
	token, ok := bearerToken(h.Get(echo.HeaderAuthorization))
	got := sha256.Sum256([]byte(token))
	if !ok || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		return problem(http.StatusUnauthorized, "unauthorized", "this endpoint needs Authorization: Bearer <the server's API key>")
	}
	return nil
}

// RateLimit is a per-client token bucket: Rate requests per second on
// average, bursts of Burst.
type RateLimit struct {
	Rate  float64
	Burst int
}

// maxClients bounds how many client addresses' buckets are remembered.
const maxClients = 65536

// limiter rate-limits requests per client address, answering 429 with
// Retry-After and the RateLimit and RateLimit-Policy headers of the IETF
// httpapi draft. Health, readiness and metrics are exempt.
type limiter struct {
	cfg     RateLimit
	exempt  func(echo.Context) bool // requests not counted
	clients *lru.Cache[string, *rate.Limiter]
	policy  string
}

func newLimiter(cfg RateLimit, exempt func(echo.Context) bool) *limiter {
	cache, _ := lru.New[string, *rate.Limiter](maxClients)
	return &limiter{cfg: cfg, exempt: exempt, clients: cache, policy: fmt.Sprintf("%d;w=1;burst=%d", int(math.Ceil(cfg.Rate)), cfg.Burst)}
}

func (l *limiter) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		switch c.Request().URL.Path {
		case "/healthz", "/readyz", "/metrics":
			return next(c)
		}
		if l.exempt != nil && l.exempt(c) {
			return next(c)
		}
		ip := c.RealIP()
		lim, ok := l.clients.Get(ip)
		if !ok {
			lim = rate.NewLimiter(rate.Limit(l.cfg.Rate), l.cfg.Burst)
			l.clients.Add(ip, lim)
		}
		now := time.Now()
		r := lim.ReserveN(now, 1)
		h := c.Response().Header()
		h.Set("RateLimit-Policy", l.policy)
		if delay := r.DelayFrom(now); delay > 0 {
			r.CancelAt(now)
			secs := int(math.Ceil(delay.Seconds()))
			h.Set(echo.HeaderRetryAfter, strconv.Itoa(secs))
			h.Set("RateLimit", fmt.Sprintf("limit=%d, remaining=0, reset=%d", int(math.Ceil(l.cfg.Rate)), secs))
			return problem(http.StatusTooManyRequests, "rate-limited",
				fmt.Sprintf("more than %g requests per second from %s; retry after %d s", l.cfg.Rate, ip, secs))
		}
		remaining := int(lim.TokensAt(now))
		h.Set("RateLimit", fmt.Sprintf("limit=%d, remaining=%d, reset=%d", int(math.Ceil(l.cfg.Rate)), max(remaining, 0), 1))
		return next(c)
	}
}

// bearerToken returns the token of an Authorization header of the Bearer
// scheme, whose name is case-insensitive (RFC 9110 §11.1: "bearer" and
// "BEARER" are Bearer), with the white space around the token dropped.
func bearerToken(auth string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(auth), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// tokenMeter meters the tokens each client address has embedded: a
// request is admitted while the client's bucket is not in debt, and its
// tokens (at most Burst) are taken after, so one large request passes and
// the client then waits for the rate to pay it back; the sustained rate
// stays at Rate tokens a second whatever the requests' sizes.
type tokenMeter struct {
	cfg     RateLimit
	clients *lru.Cache[string, *rate.Limiter]
}

func newTokenMeter(cfg RateLimit) *tokenMeter {
	cache, _ := lru.New[string, *rate.Limiter](maxClients)
	return &tokenMeter{cfg: cfg, clients: cache}
}

func (m *tokenMeter) limiter(ip string) *rate.Limiter {
	lim, ok := m.clients.Get(ip)
	if !ok {
		lim = rate.NewLimiter(rate.Limit(m.cfg.Rate), m.cfg.Burst)
		m.clients.Add(ip, lim)
	}
	return lim
}

// admit answers 429 with Retry-After while ip's bucket is in debt.
func (m *tokenMeter) admit(c echo.Context) error {
	ip := c.RealIP()
	if left := m.limiter(ip).TokensAt(time.Now()); left < 0 {
		secs := int(math.Ceil(-left / m.cfg.Rate))
		c.Response().Header().Set(echo.HeaderRetryAfter, strconv.Itoa(secs))
		return embeddingProblem(http.StatusTooManyRequests, "rate_limit_exceeded", "",
			fmt.Sprintf("%s has had more than %g tokens a second embedded; retry after %d s", ip, m.cfg.Rate, secs))
	}
	return nil
}

// charge takes a request's tokens from ip's bucket.
func (m *tokenMeter) charge(c echo.Context, tokens int) {
	now := time.Now()
	m.limiter(c.RealIP()).ReserveN(now, min(tokens, m.cfg.Burst))
}
