package api

import (
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
)

// requireKey guards write endpoints. With a key configured, a request must
// carry "Authorization: Bearer <key>" (compared in constant time). Without
// one, writes are allowed only when the service listens on loopback, where
// only this machine can reach it.
func (s *Server) requireKey(next echo.HandlerFunc) echo.HandlerFunc {
	var want [32]byte
	if s.apiKey != "" {
		want = sha256.Sum256([]byte(s.apiKey))
	}
	return func(c echo.Context) error {
		if s.apiKey == "" {
			if s.openWrites {
				return next(c)
			}
			return problem(http.StatusForbidden, "writes-disabled",
				"write endpoints are disabled: the server has no API key configured and listens beyond loopback")
		}
		token, ok := bearerToken(c.Request().Header.Get(echo.HeaderAuthorization))
		got := sha256.Sum256([]byte(token))
		if !ok || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="papersearch"`)
			return problem(http.StatusUnauthorized, "unauthorized", "this endpoint needs Authorization: Bearer <the server's API key>")
		}
		return next(c)
	}
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
	clients *lru.Cache[string, *rate.Limiter]
	policy  string
}

func newLimiter(cfg RateLimit) *limiter {
	cache, _ := lru.New[string, *rate.Limiter](maxClients)
	return &limiter{cfg: cfg, clients: cache, policy: fmt.Sprintf("%d;w=1;burst=%d", int(math.Ceil(cfg.Rate)), cfg.Burst)}
}

func (l *limiter) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		switch c.Request().URL.Path {
		case "/healthz", "/readyz", "/metrics":
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
