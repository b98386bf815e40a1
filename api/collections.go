package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/search"
)

// The routes of one collection: its recommendations, and adding papers to
// it or marking them not interested for it.

// collectionTag reads the collection's tag from the path.
func collectionTag(c echo.Context) (string, error) {
	raw := c.Param("tag")
	tag, err := url.PathUnescape(raw)
	if err != nil || !papersearch.ValidCollectionTag(tag) {
		return "", invalid("the collection in the path is not a tag",
			wire.FieldProblem{Param: "tag", Detail: papersearch.ErrBadCollectionTag.Error()})
	}
	return strings.ToLower(tag), nil
}

// recommendations answers GET /v1/collections/{tag}/recommendations: the
// papers outside the collection that fit it best, within the filter the
// parameters give, each naming the members it is nearest to; exports as
// search's do.
func (s *Server) recommendations(c echo.Context) error {
	tag, err := collectionTag(c)
	if err != nil {
		return err
	}
	params := c.QueryParams()
	if err := knownParams(params, "limit", "cursor", "method"); err != nil {
		return err
	}
	rq := search.RecommendQuery{Tag: tag, Limit: search.DefaultLimit, Cursor: params.Get("cursor"), Method: search.RecommendMethod(params.Get("method"))}
	if err := intParam(params, "limit", 1, search.MaxLimit, &rq.Limit); err != nil {
		return err
	}
	if params.Has("method") && rq.Method == "" {
		return invalid("method must be neighbours, centroid, rocchio or logistic", wire.FieldProblem{Param: "method", Detail: `must be neighbours, centroid, rocchio or logistic, got ""`})
	}
	if err := filterParams(params, &rq.Filter); err != nil {
		return err
	}
	res, err := s.engine.Recommend(c.Request().Context(), rq)
	if err != nil {
		return asParameterProblem(err)
	}
	return respond(c, res)
}

// collectionPapers answers GET /v1/collections/{tag}/papers: its papers
// and those marked not interested for it (at most
// search.MaxCollectionPapers of each); a collection no paper holds has
// none.
func (s *Server) collectionPapers(c echo.Context) error {
	tag, err := collectionTag(c)
	if err != nil {
		return err
	}
	for name := range c.QueryParams() {
		return invalid("this request takes no parameters", wire.FieldProblem{Param: name, Detail: "is not a parameter of this request"})
	}
	out := wire.CollectionResponse{Tag: tag, Papers: []papersearch.Paper{}, NotInterested: []papersearch.Paper{}}
	ctx := c.Request().Context()
	for dst, t := range map[*[]papersearch.Paper]string{&out.Papers: tag, &out.NotInterested: papersearch.NotInterestedTag(tag)} {
		papers, err := s.engine.CollectionPapers(ctx, t)
		if err != nil {
			return err
		}
		for _, p := range papers {
			if p.Authors == nil {
				p.Authors = []string{}
			}
			*dst = append(*dst, p)
		}
	}
	return c.JSON(http.StatusOK, out)
}

// retag answers the membership routes of a collection: POST with {"ids"}
// adds or marks papers, DELETE with an id in the path takes one out; the
// tags it adds and removes are given by the route (collectionEdit).
func (s *Server) retag(edit collectionEdit) echo.HandlerFunc {
	return func(c echo.Context) error {
		tag, err := collectionTag(c)
		if err != nil {
			return err
		}
		var ids []string
		if c.Request().Method == http.MethodDelete {
			id, err := pathID(c)
			if err != nil {
				return err
			}
			ids = []string{id}
		} else {
			raw, err := s.readBody(c, s.maxBody)
			if err != nil {
				return err
			}
			canon, err := checkJSON(raw)
			if err != nil {
				return err
			}
			var req wire.CollectionPapers
			if err := decodeCanonical(canon, &req, ""); err != nil {
				return err
			}
			for i, id := range req.IDs {
				if !papersearch.ValidID(id) {
					return invalid("ids must hold paper ids", wire.FieldProblem{Pointer: fmt.Sprintf("/ids/%d", i), Detail: papersearch.ErrBadID.Error()})
				}
			}
			ids = req.IDs
		}
		add, remove := edit(tag)
		ctx, cancel := extendWriteDeadline(c, len(ids))
		defer cancel()
		papers, err := s.catalog.Retag(ctx, ids, add, remove)
		var fe *papersearch.FieldError
		if err != nil && c.Request().Method == http.MethodDelete && errors.As(err, &fe) {
			// The one id came in the path, not in a body's ids.
			p := toProblem(err)
			p.Errors = []wire.FieldProblem{{Param: "id", Detail: fieldDetail(fe)}}
			return p
		}
		if err != nil {
			return toProblem(err)
		}
		out := wire.CollectionChange{Tag: tag, Updated: make([]string, len(papers))}
		for i, p := range papers {
			out.Updated[i] = p.ID
		}
		return c.JSON(http.StatusOK, out)
	}
}

// collectionEdit says, for a collection's tag, which tags a membership
// route adds and removes.
type collectionEdit func(tag string) (add, remove []string)

// addToCollection puts papers in the collection: they are no longer
// marked not interested for it.
func addToCollection(tag string) (add, remove []string) {
	return []string{tag}, []string{papersearch.NotInterestedTag(tag)}
}

// removeFromCollection takes papers out of the collection.
func removeFromCollection(tag string) (add, remove []string) { return nil, []string{tag} }

// markNotInterested marks papers not interested for the collection: they
// are no longer in it.
func markNotInterested(tag string) (add, remove []string) {
	return []string{papersearch.NotInterestedTag(tag)}, []string{tag}
}

// unmarkNotInterested takes the mark off papers.
func unmarkNotInterested(tag string) (add, remove []string) {
	return nil, []string{papersearch.NotInterestedTag(tag)}
}
