package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/search"
)

func (s *Server) search(c echo.Context) error {
	var req wire.SearchRequest
	if err := s.decode(c, s.maxBody, &req); err != nil {
		return err
	}
	res, err := s.runSearch(c.Request().Context(), req)
	if err != nil {
		return err
	}
	return respond(c, res)
}

// runSearch answers a search request (over HTTP or MCP); a degraded
// answer is first-hand news for /readyz, sooner than its next probe.
func (s *Server) runSearch(ctx context.Context, req wire.SearchRequest) (search.Results, error) {
	q, err := searchQuery(req)
	if err != nil {
		return search.Results{}, err
	}
	res, err := s.engine.Search(ctx, q)
	if err == nil && len(res.Degraded) > 0 {
		s.probe.Store(&probeResult{at: time.Now(), err: fmt.Errorf("a search just now answered degraded: %v", res.Degraded)})
	}
	return res, err
}

// searchQuery is the engine's query for a search request (over HTTP or
// MCP), or the problem with the request.
func searchQuery(req wire.SearchRequest) (search.Query, error) {
	limit, err := search.RequestedLimit(req.Limit)
	if err != nil {
		return search.Query{}, err
	}
	q := search.Query{Text: req.Query, Like: req.Like, Unlike: req.Unlike, Mode: search.Mode(req.Mode),
		Limit: limit, Cursor: req.Cursor, Explain: req.Explain, Aspect: search.Aspect(req.Aspect)}
	if req.Filters != nil {
		q.Filter = *req.Filters
	}
	for _, side := range []struct {
		name string
		ids  []string
	}{{"like", req.Like}, {"unlike", req.Unlike}} {
		for i, id := range side.ids {
			if !papersearch.ValidID(id) {
				return q, invalid("like and unlike must hold paper ids",
					wire.FieldProblem{Pointer: fmt.Sprintf("/%s/%d", side.name, i), Detail: papersearch.ErrBadID.Error()})
			}
		}
	}
	return q, nil
}

func (s *Server) getPaper(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	p, err := getPaper(c.Request().Context(), s.engine, id)
	if err != nil {
		return err
	}
	if exportType(c.Request().Header.Get(echo.HeaderAccept), MediaBibTeX) == MediaBibTeX {
		return c.Blob(http.StatusOK, MediaBibTeX+"; charset=utf-8", []byte(BibTeX([]papersearch.Hit{{ID: p.ID, Paper: p}})))
	}
	return c.JSON(http.StatusOK, p)
}

func (s *Server) collections(c echo.Context) error {
	for name := range c.QueryParams() {
		return invalid(fmt.Sprintf("unknown parameter %q", name), wire.FieldProblem{Param: name, Detail: "is not a parameter of this request"})
	}
	cs, err := collections(c.Request().Context(), s.engine)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cs)
}

// collections is what GET /v1/collections answers.
func collections(ctx context.Context, engine Engine) (wire.CollectionsResponse, error) {
	cs, err := engine.Collections(ctx)
	if cs == nil {
		cs = []papersearch.Collection{}
	}
	return wire.CollectionsResponse{Collections: cs}, err
}

func (s *Server) similar(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	sq := search.SimilarQuery{ID: id, Limit: search.DefaultLimit, Mode: search.Mode(c.QueryParam("mode")),
		Cursor: c.QueryParam("cursor")}
	params := c.QueryParams()
	if err := knownParams(params, "limit", "mode", "cursor", "explain", "aspect", "sentences"); err != nil {
		return err
	}
	if err := intParam(params, "limit", 1, search.MaxLimit, &sq.Limit); err != nil {
		return err
	}
	if params.Has("mode") && sq.Mode == "" {
		return invalid("mode must be hybrid, dense or lexical", wire.FieldProblem{Param: "mode", Detail: "must be hybrid, dense or lexical, got \"\""})
	}
	if err := filterParams(params, &sq.Filter); err != nil {
		return err
	}
	// The engine checks aspect and sentences (which aspects exist, how many
	// sentences and where); here they are only read.
	if params.Has("aspect") {
		if sq.Aspect = search.Aspect(params.Get("aspect")); sq.Aspect == "" {
			return invalid("aspect must be background, method or result",
				wire.FieldProblem{Param: "aspect", Detail: "must be background, method or result, got \"\""})
		}
	}
	if params.Has("sentences") {
		raw := params.Get("sentences")
		parts := strings.Split(raw, ",")
		sq.Sentences = make([]int, len(parts))
		for i, p := range parts {
			n, err := strconv.Atoi(p)
			if err != nil {
				return invalid("sentences must be a comma-separated list of sentence places",
					wire.FieldProblem{Param: "sentences", Detail: fmt.Sprintf("must be places such as 0,3, got %q", raw)})
			}
			sq.Sentences[i] = n
		}
	}
	if params.Has("explain") {
		switch raw := params.Get("explain"); raw {
		case "true":
			sq.Explain = true
		case "false":
		default:
			return invalid("explain must be true or false", wire.FieldProblem{Param: "explain", Detail: fmt.Sprintf("must be true or false, got %q", raw)})
		}
	}
	res, err := s.engine.Similar(c.Request().Context(), sq)
	if err != nil {
		return asParameterProblem(err)
	}
	return respond(c, res)
}

// filterParamNames are the parameters of a filter in a GET request.
var filterParamNames = []string{"year_min", "year_max", "venue", "author", "tag", "since", "until", "by"} // read-only

// listParamNames are the parameters a GET request may repeat, each value
// one more of a list (venue=A&venue=B); any other given twice is refused,
// not read as its first value.
var listParamNames = []string{"venue", "tag"} // read-only

// knownParams refuses a parameter that is neither a filter's nor one of
// names, and one given more than once that is not a list.
func knownParams(params url.Values, names ...string) error {
	for name, values := range params {
		if !slices.Contains(names, name) && !slices.Contains(filterParamNames, name) {
			return invalid(fmt.Sprintf("unknown parameter %q", name), wire.FieldProblem{Param: name, Detail: "is not a parameter of this request"})
		}
		if len(values) > 1 && !slices.Contains(listParamNames, name) {
			return invalid(fmt.Sprintf("parameter %q is given %d times", name, len(values)),
				wire.FieldProblem{Param: name, Detail: "must be given at most once"})
		}
	}
	return nil
}

// intParam reads the integer parameter name, lo to hi, into dst when it
// is given. A typed parameter given with an empty value is invalid, as its
// schema says; only strings may be empty.
func intParam(params url.Values, name string, lo, hi int, dst *int) error {
	if !params.Has(name) {
		return nil
	}
	raw := params.Get(name)
	n, err := strconv.Atoi(raw)
	if err != nil || n < lo || n > hi {
		return invalid(fmt.Sprintf("%s must be an integer between %d and %d", name, lo, hi),
			wire.FieldProblem{Param: name, Detail: fmt.Sprintf("must be an integer between %d and %d, got %q", lo, hi, raw)})
	}
	*dst = n
	return nil
}

// filterParams reads a filter's parameters (filterParamNames) into f; the
// engine checks what they say.
func filterParams(params url.Values, f *papersearch.Filter) error {
	for _, p := range []struct {
		name string
		dst  *int
	}{{"year_min", &f.YearMin}, {"year_max", &f.YearMax}} {
		if err := intParam(params, p.name, papersearch.MinYear, papersearch.MaxYear, p.dst); err != nil {
			return err
		}
	}
	f.Venues = params["venue"]
	f.Author = params.Get("author")
	f.Tags = params["tag"]
	return dateParams(params, f)
}

// dateParams reads a filter's date parameters, since, until and by, into
// f; the engine checks their values.
func dateParams(params url.Values, f *papersearch.Filter) error {
	for _, p := range []struct {
		name string
		dst  *papersearch.Bound
	}{{"since", &f.Since}, {"until", &f.Until}} {
		if !params.Has(p.name) {
			continue
		}
		if *p.dst = papersearch.Bound(params.Get(p.name)); *p.dst == "" {
			return invalid(p.name+" must be a day (YYYY-MM-DD) or an RFC 3339 time",
				wire.FieldProblem{Param: p.name, Detail: "must be a day or an RFC 3339 time, got \"\""})
		}
	}
	if params.Has("by") {
		if f.By = papersearch.DateBy(params.Get("by")); f.By == "" {
			return invalid("by must be published or added", wire.FieldProblem{Param: "by", Detail: "must be published or added, got \"\""})
		}
	}
	return nil
}

// asParameterProblem turns an engine's field error about a request made of
// query parameters into a problem naming the parameter, not a JSON pointer.
func asParameterProblem(err error) error {
	var fe *papersearch.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	p := toProblem(err)
	// A parameter is named whole: filters/venues is venue, sentences/2
	// is sentences.
	param, _, _ := strings.Cut(strings.TrimPrefix(fe.Field, "filters/"), "/")
	switch param {
	case "venues":
		param = "venue"
	case "tags":
		param = "tag"
	}
	p.Errors = []wire.FieldProblem{{Param: param, Detail: fieldDetail(fe)}}
	return p
}
