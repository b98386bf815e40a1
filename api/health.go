package api

import (
	"cmp"
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
)

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
	// The embedder failing degrades search (lexical results only) and
	// refuses the writes that need it, but the service still answers, so it
	// stays ready and says what is degraded. The probe goes through the
	// engine's embedding breaker (see search.Engine.Embed): while it is
	// open, it answers at once and starts the breaker's own probe; a probe
	// that gets no answer in time opens it, so writes fail fast too.
	if err := s.embedderHealth(c.Request().Context()); err != nil {
		s.readiness("degraded: embedding fails; searches answer from lexical retrieval alone", err)
		return c.JSON(http.StatusOK, map[string]any{"status": "degraded", "degraded": []string{"dense"},
			"detail": "embedding fails, so searches answer from lexical retrieval alone and writes that need embedding are refused; the log says why", "index": info,
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
	p.Instance, p.RequestID = c.Request().URL.EscapedPath(), requestID(c)
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

// settling says what the store is doing before it settles: Ready's
// words ("seeding the empty store: 5 of 19 papers done").
func (s *Server) settling() string {
	if s.ready != nil {
		if err := s.ready(); err != nil {
			return err.Error()
		}
	}
	return "the store is still being indexed"
}

// settleReadWait bounds how long a read of the papers waits for the store
// to settle (Options.Settled) before it is answered 503: a first start
// seeds 19 papers in a few seconds, so a new user's first question waits
// for them rather than finding an empty store.
const settleReadWait = 15 * time.Second

// settledRead holds a read of the papers (a search, a paper, a
// collection, the map, a feed) until the store has settled, up to
// settleReadWait, and then answers 503 with Retry-After and Ready's
// words: an answer from a store still being seeded would be empty or
// partial, and say nothing of why.
func (s *Server) settledRead(next echo.HandlerFunc) echo.HandlerFunc {
	if s.settled == nil {
		return next
	}
	return func(c echo.Context) error {
		select {
		case <-s.settled:
			return next(c)
		default:
		}
		wait := time.NewTimer(min(cmp.Or(s.settleWait, DefaultSettleWait), settleReadWait))
		defer wait.Stop()
		select {
		case <-s.settled:
			return next(c)
		case <-c.Request().Context().Done():
			return c.Request().Context().Err()
		case <-wait.C:
		}
		p := problem(http.StatusServiceUnavailable, "not-ready", "papersearch is not ready yet: "+s.settling()+"; ask again in a few seconds")
		p.RetryAfter = retryAfterSeconds
		return p
	}
}
