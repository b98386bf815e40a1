package api

import (
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/atlas/corpusmap"
	"github.com/papersearch/papersearch/search"
)

// corpusMap answers GET /v1/map: the map of the papers within the filter
// the parameters give, the clusters of every level, each paper's cluster
// at level (default the finest), and the results of the search q and the
// papers of the collection lit up. Before the first map is made it is 503
// with Retry-After.
func (s *Server) corpusMap(c echo.Context) error {
	if s.maps == nil {
		return problem(http.StatusNotImplemented, "map-unavailable", "this server keeps no map")
	}
	params := c.QueryParams()
	if err := knownParams(params, "level", "q", "collection", "titles"); err != nil {
		return err
	}
	var q corpusmap.Query
	if err := filterParams(params, &q.Filter); err != nil {
		return err
	}
	q.Highlight = params.Get("q")
	if params.Has("q") {
		var fe *papersearch.FieldError
		if err := search.ValidateText(q.Highlight); errors.As(err, &fe) {
			return invalid("q must be a question in plain words", wire.FieldProblem{Param: "q", Detail: fe.Reason})
		} else if err != nil {
			return err
		}
	}
	if params.Has("collection") {
		q.HighlightTag = params.Get("collection")
		if !papersearch.ValidCollectionTag(q.HighlightTag) {
			return invalid("collection must be a collection's tag", wire.FieldProblem{Param: "collection", Detail: papersearch.ErrBadCollectionTag.Error()})
		}
	}
	titles := true
	if params.Has("titles") {
		b, err := strconv.ParseBool(params.Get("titles"))
		if err != nil {
			return invalid("titles must be true or false", wire.FieldProblem{Param: "titles", Detail: "must be true or false, got " + strconv.Quote(params.Get("titles"))})
		}
		titles = b
	}
	view, err := s.maps.Map(c.Request().Context(), q)
	if err != nil {
		return asParameterProblem(err)
	}
	level := corpusmap.Levels - 1
	if err := intParam(params, "level", 0, level, &level); err != nil {
		return err
	}
	level = min(level, len(view.Clusters)-1) // a small map has fewer levels
	return c.JSON(http.StatusOK, mapResponse(view, level, titles))
}

// mapResponse is the wire form of a map view.
func mapResponse(v corpusmap.View, level int, titles bool) wire.MapResponse {
	quant := func(x float32) int { return int(math.Round(float64(x) * wire.MapScale)) }
	out := wire.MapResponse{Built: v.Built, Scale: wire.MapScale, Level: max(level, 0), Levels: make([][]wire.MapCluster, len(v.Clusters)),
		IDs: make([]string, len(v.Points)), X: make([]int, len(v.Points)), Y: make([]int, len(v.Points)), Cluster: make([]int, len(v.Points)),
		Placed: []int{}, Highlight: []int{}}
	for l, clusters := range v.Clusters {
		out.Levels[l] = make([]wire.MapCluster, len(clusters))
		for c, mc := range clusters {
			out.Levels[l][c] = wire.MapCluster{ID: c, Parent: mc.Parent, Size: mc.Size, X: quant(mc.Centre[0]), Y: quant(mc.Centre[1]),
				Label: mc.Label(), Terms: append([]string{}, mc.Terms...), Central: append([]string{}, mc.Central...)}
		}
	}
	if titles {
		out.Titles = make([]string, len(v.Points))
	}
	at := make(map[string]int, len(v.Points))
	for i, p := range v.Points {
		at[p.ID] = i
		out.IDs[i], out.X[i], out.Y[i] = p.ID, quant(p.Point[0]), quant(p.Point[1])
		// The cluster at level: the finest one's ancestor.
		c := p.Finest
		for l := len(v.Clusters) - 1; l > level && c >= 0; l-- {
			c = v.Clusters[l][c].Parent
		}
		out.Cluster[i] = c
		if titles {
			out.Titles[i] = p.Title
		}
		if p.Placed {
			out.Placed = append(out.Placed, i)
		}
	}
	for _, id := range v.Highlight {
		if i, ok := at[id]; ok {
			out.Highlight = append(out.Highlight, i)
		}
	}
	slices.Sort(out.Highlight)
	return out
}
