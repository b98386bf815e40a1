package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/alerts"
	"github.com/papersearch/papersearch/api/wire"
)

// Saved searches (alerts): a query or a collection, with filters, whose
// Atom feed lists the papers added within a window that fit it. Making,
// listing and deleting them takes the write key; a feed's URL holds its
// alert's random id and is read without one, as feed readers do.

// alertOf checks an alert request and returns the alert it makes, with
// the defaults filled.
func alertOf(req wire.AlertRequest) (wire.Alert, error) {
	a := wire.Alert{Query: req.Query, Collection: req.Collection, Filters: req.Filters, Window: DefaultFeedWindow, Limit: DefaultFeedLimit}
	if req.Window != nil {
		a.Window = *req.Window
	}
	switch {
	case (a.Query == "") == (a.Collection == ""):
		return a, invalid("give a query or a collection, one of them",
			wire.FieldProblem{Pointer: "/query", Detail: "give query or collection, not both or neither"})
	case a.Collection != "" && !papersearch.ValidCollectionTag(a.Collection):
		return a, invalid("collection must be a tag", wire.FieldProblem{Pointer: "/collection", Detail: papersearch.ErrBadCollectionTag.Error()})
	}
	if f := a.Filters; f != nil {
		for name, set := range map[string]bool{"since": f.Since != "", "until": f.Until != "", "by": f.By != ""} {
			if set {
				return a, invalid("an alert's window bounds when its papers were added",
					wire.FieldProblem{Pointer: "/filters/" + name, Detail: "is not a filter of an alert: give window"})
			}
		}
	}
	if _, err := papersearch.ParsePeriod(a.Window); err != nil {
		return a, invalid("window "+err.Error(), wire.FieldProblem{Pointer: "/window", Detail: err.Error()})
	}
	if req.Limit != nil {
		if a.Limit = *req.Limit; a.Limit < 1 || a.Limit > MaxFeedLimit {
			return a, invalid("limit must be between 1 and 100", wire.FieldProblem{Pointer: "/limit", Detail: "must be between 1 and 100"})
		}
	}
	return a, nil
}

// alertFeed is the feed an alert lists.
func alertFeed(a wire.Alert) feedSpec {
	window, _ := papersearch.ParsePeriod(a.Window) // checked when made
	spec := feedSpec{Key: "alert:" + a.ID, Query: a.Query, Tag: a.Collection, Window: window, Limit: a.Limit, Saved: true,
		Title: "papersearch: " + a.Query}
	if a.Collection != "" {
		spec.Title = "papersearch: new for " + a.Collection
	}
	if a.Filters != nil {
		spec.Filter = *a.Filters
	}
	return spec
}

// withFeedURL is a kept alert as answered: with its feed's URL.
func (s *Server) withFeedURL(c echo.Context, a wire.Alert) wire.Alert {
	a.FeedURL = s.trust.baseURL(c.Request()) + "/v1/alerts/" + a.ID + "/feed.atom"
	return a
}

// createAlert answers POST /v1/alerts: 201 with the alert and its feed's
// URL. What the engine would refuse of it is refused now (a collection no
// paper holds yet is fine: its feed is empty until one does).
func (s *Server) createAlert(c echo.Context) error {
	if s.alerts == nil {
		return problem(http.StatusNotImplemented, "alerts-unavailable", "this server keeps no alerts")
	}
	var req wire.AlertRequest
	if err := s.decode(c, s.maxBody, &req); err != nil {
		return err
	}
	a, err := alertOf(req)
	if err != nil {
		return err
	}
	if _, err := s.feedHits(c.Request().Context(), alertFeed(a), time.Now()); err != nil {
		return err
	}
	a.Created = time.Now().UTC().Truncate(time.Second)
	a, err = s.alerts.Add(c.Request().Context(), a)
	if err != nil {
		return err
	}
	a = s.withFeedURL(c, a)
	c.Response().Header().Set(echo.HeaderLocation, "/v1/alerts/"+a.ID)
	return c.JSON(http.StatusCreated, a)
}

// listAlerts answers GET /v1/alerts, newest first.
func (s *Server) listAlerts(c echo.Context) error {
	out := wire.AlertsResponse{Alerts: []wire.Alert{}}
	if s.alerts != nil {
		list, err := s.alerts.List(c.Request().Context())
		if err != nil {
			return err
		}
		for _, a := range list {
			out.Alerts = append(out.Alerts, s.withFeedURL(c, a))
		}
	}
	return c.JSON(http.StatusOK, out)
}

// alert reads the alert the path names.
func (s *Server) alert(c echo.Context) (wire.Alert, error) {
	if s.alerts == nil {
		return wire.Alert{}, alerts.ErrNotFound
	}
	a, err := s.alerts.Get(c.Request().Context(), c.Param("id"))
	return a, err
}

// getAlert answers GET /v1/alerts/{id}.
func (s *Server) getAlert(c echo.Context) error {
	a, err := s.alert(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.withFeedURL(c, a))
}

// deleteAlert answers DELETE /v1/alerts/{id}: 204, and its feed is gone.
func (s *Server) deleteAlert(c echo.Context) error {
	if _, err := s.alert(c); err != nil {
		return err
	}
	if err := s.alerts.Delete(c.Request().Context(), c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// alertFeedRoute answers GET /v1/alerts/{id}/feed.atom.
func (s *Server) alertFeedRoute(c echo.Context) error {
	a, err := s.alert(c)
	if err != nil {
		return err
	}
	for name := range c.QueryParams() {
		return invalid("an alert's feed takes no parameters: its alert says what it lists",
			wire.FieldProblem{Param: name, Detail: "is not a parameter of this request"})
	}
	return s.serveFeed(c, alertFeed(a))
}
