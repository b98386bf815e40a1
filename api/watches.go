package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/catalog/imports"
)

// Watches: network sources the server imports from by itself, each on
// its period (imports.Watches). Every route takes the write key.

// watchesOff is the answer of a server that runs no watches.
func watchesOff() error {
	return problem(http.StatusNotImplemented, "watches-unavailable", "this server runs no watches")
}

// createWatch answers POST /v1/watches: 201 with the watch, due at once.
func (s *Server) createWatch(c echo.Context) error {
	if s.watches == nil {
		return watchesOff()
	}
	var req wire.WatchRequest
	if err := s.decode(c, s.maxBody, &req); err != nil {
		return err
	}
	w, err := s.watches.Add(c.Request().Context(), imports.WatchRequest(req))
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/v1/watches/"+w.ID)
	return c.JSON(http.StatusCreated, wire.Watch(w))
}

// listWatches answers GET /v1/watches, oldest first.
func (s *Server) listWatches(c echo.Context) error {
	out := wire.WatchesResponse{Watches: []wire.Watch{}}
	if s.watches != nil {
		ws, err := s.watches.List(c.Request().Context())
		if err != nil {
			return err
		}
		for _, w := range ws {
			out.Watches = append(out.Watches, wire.Watch(w))
		}
	}
	return c.JSON(http.StatusOK, out)
}

// getWatch answers GET /v1/watches/{id}: the watch and how its runs went.
func (s *Server) getWatch(c echo.Context) error {
	if s.watches == nil {
		return imports.ErrNoWatch
	}
	w, err := s.watches.Get(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.Watch(w))
}

// deleteWatch answers DELETE /v1/watches/{id}: 204; a run under way here
// stops after the batch it is storing, which stays.
func (s *Server) deleteWatch(c echo.Context) error {
	if s.watches == nil {
		return imports.ErrNoWatch
	}
	if err := s.watches.Remove(c.Request().Context(), c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// runWatch answers POST /v1/watches/{id}/run: 202, the watch due now (it
// starts within the scheduler's next look, in its turn for one of the
// imports.MaxWatchRuns slots, unless it is running).
func (s *Server) runWatch(c echo.Context) error {
	if s.watches == nil {
		return imports.ErrNoWatch
	}
	w, err := s.watches.RunNow(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, wire.Watch(w))
}
