package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/labstack/echo/v4"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/catalog"
)

// MaxIngestPapers bounds the papers of one POST /v1/papers.
const MaxIngestPapers = 1000

// ingest adds papers through the catalog's one pipeline: a paper whose id
// is stored replaces it whole (POST is idempotent by id), and a version of
// a stored work under another id joins that work, as an import's does; the
// answer's ids say where each paper went.
func (s *Server) ingest(c echo.Context) error {
	raw, err := s.readBody(c, BatchBodyFactor*s.maxBody)
	if err != nil {
		return err
	}
	req, single, err := decodeIngest(raw)
	if err != nil {
		return err
	}
	if len(req.Papers) == 0 || len(req.Papers) > MaxIngestPapers {
		return invalid(fmt.Sprintf("papers must hold 1 to %d papers", MaxIngestPapers),
			wire.FieldProblem{Pointer: "/papers", Detail: fmt.Sprintf("holds %d papers", len(req.Papers))})
	}
	ctx, cancel := extendWriteDeadline(c, len(req.Papers))
	defer cancel()
	// One batch, checked and stored whole or not at all; when a paper was
	// added is the service's to say, so a request that says is refused.
	sum, err := s.catalog.Add(ctx, req.Papers, catalog.AddOptions{Replace: true, RefuseAdded: true})
	var bad *catalog.InvalidError
	if errors.As(err, &bad) {
		var problems []wire.FieldProblem
		for _, in := range bad.Invalid {
			at := paperPointer(in.Index, single)
			if errors.Is(in.Err, catalog.ErrAddedGiven) {
				problems = append(problems, addedProblem(at))
				continue
			}
			problems = append(problems, paperFieldProblem(at, in.Err))
		}
		return invalid(fmt.Sprintf("%d of %d papers are invalid; nothing was stored", len(bad.Invalid), bad.Papers), problems...)
	}
	if err != nil {
		p := toProblem(err)
		if errors.Is(err, catalog.ErrNothingStored) {
			p.Detail += "; nothing of the batch was stored"
		}
		return errors.Join(p, err) // answered as p, logged with its cause
	}
	return c.JSON(http.StatusOK, wire.IngestResponse{IngestSummary: sum.IngestSummary, Merged: sum.Merged, IDs: sum.IDs})
}

// deletePaper removes one paper.
func (s *Server) deletePaper(c echo.Context) error {
	c.SetPath(paperRoutePath)
	id, err := pathID(c)
	if err != nil {
		return err
	}
	if err := s.catalog.Delete(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// paperPointer is the JSON pointer of the i-th paper of a POST's body: ""
// for a single paper sent alone.
func paperPointer(i int, single bool) string {
	if single {
		return ""
	}
	return fmt.Sprintf("/papers/%d", i)
}

// addedProblem is the problem of a paper written with an added time: the
// service's to say, read-only.
func addedProblem(prefix string) wire.FieldProblem {
	return wire.FieldProblem{Pointer: prefix + "/added", Detail: "is when the service first stored the paper: leave it out"}
}

// decodeIngest decodes the body of POST /v1/papers: {"papers": [...]} or
// one paper object (single). Each paper is decoded on its own, so an error
// names it: /papers/1/year.
func decodeIngest(raw []byte) (req wire.IngestRequest, single bool, err error) {
	canon, err := checkJSON(raw)
	if err != nil {
		return req, false, err
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(canon, &top) == nil && top != nil {
		if _, ok := top["papers"]; !ok {
			var p papersearch.Paper
			if err := decodeCanonical(canon, &p, ""); err != nil {
				return req, true, err
			}
			return wire.IngestRequest{Papers: []papersearch.Paper{p}}, true, nil
		}
	}
	var envelope struct {
		Papers []json.RawMessage `json:"papers"`
	}
	if err := decodeCanonical(canon, &envelope, ""); err != nil {
		return req, false, err
	}
	if len(envelope.Papers) > MaxIngestPapers {
		return req, false, invalid(fmt.Sprintf("papers must hold 1 to %d papers", MaxIngestPapers),
			wire.FieldProblem{Pointer: "/papers", Detail: fmt.Sprintf("holds %d papers", len(envelope.Papers))})
	}
	req.Papers = make([]papersearch.Paper, len(envelope.Papers))
	for i, r := range envelope.Papers {
		if err := decodeCanonical(r, &req.Papers[i], fmt.Sprintf("/papers/%d", i)); err != nil {
			return req, false, err
		}
	}
	return req, false, nil
}

// patchPaper answers PATCH /v1/papers/{id}: the body is a JSON Merge Patch
// (RFC 7396) of the stored paper, so a client changes the fields it names
// and keeps the rest (POST replaces a paper whole); null removes an
// optional field. The patched paper passes the rules a POSTed one does
// and replaces the stored one (catalog.Catalog.Update); the answer is the
// paper stored. The id
// cannot change.
func (s *Server) patchPaper(c echo.Context) error {
	c.SetPath(paperRoutePath)
	id, err := pathID(c)
	if err != nil {
		return err
	}
	// One paper within the schema's limits (5,000 authors of 500
	// characters) can be some megabytes: a patch takes what a POST of it
	// may hold.
	raw, err := s.readBody(c, BatchBodyFactor*s.maxBody)
	if err != nil {
		return err
	}
	patch, err := checkJSON(raw)
	if err != nil {
		return err
	}
	if bytes.TrimSpace(patch)[0] != '{' {
		return invalid("a merge patch of a paper is a JSON object naming the fields to change", wire.FieldProblem{Pointer: "", Detail: "must be an object"})
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(patch, &fields) == nil {
		if _, ok := fields["added"]; ok {
			return invalid("added is when the service first stored the paper, not a field to write", addedProblem(""))
		}
	}
	ctx := c.Request().Context()
	old, err := s.engine.Get(ctx, id)
	if err != nil {
		return err
	}
	doc, err := json.Marshal(old)
	if err != nil {
		return err
	}
	merged, err := jsonpatch.MergePatch(doc, patch)
	if err != nil {
		return invalid("the merge patch cannot be applied: "+err.Error(), wire.FieldProblem{Pointer: "", Detail: "must be a JSON Merge Patch (RFC 7396)"})
	}
	var p papersearch.Paper
	if err := decodeCanonical(merged, &p, ""); err != nil {
		return err
	}
	if p.ID != old.ID {
		// 409: the patch is well formed, but conflicts with the paper it
		// names, whose id is what names it.
		pr := problem(http.StatusConflict, "id-change", "a patch cannot change a paper's id; POST the paper under its new id and DELETE the old one")
		pr.Errors = []wire.FieldProblem{{Pointer: "/id", Detail: fmt.Sprintf("must stay %q", old.ID)}}
		return pr
	}
	wctx, cancel := extendWriteDeadline(c, 1)
	defer cancel()
	stored, err := s.catalog.Update(wctx, p)
	var fe *papersearch.FieldError
	if errors.As(err, &fe) {
		return invalid(err.Error(), paperFieldProblem("", err))
	}
	if err != nil {
		return err
	}
	if stored.Authors == nil {
		stored.Authors = []string{}
	}
	return c.JSON(http.StatusOK, stored)
}

// paperFieldProblem names the field of a paper that papersearch.Complete
// refused, under prefix (the paper's JSON pointer in the body).
func paperFieldProblem(prefix string, err error) wire.FieldProblem {
	var fe *papersearch.FieldError
	if errors.As(err, &fe) {
		prefix += "/" + fe.Field
	}
	return wire.FieldProblem{Pointer: prefix, Detail: err.Error()}
}

// pathID returns the :id path parameter, unescaped and validated. Echo
// routes on the escaped path only when the request's escaping differs from
// Go's default (URL.RawPath set, as for an id with an escaped "/"); then,
// and only then, the parameter is still escaped: unescaping it otherwise
// would turn a literal "%41" in an id into "A".
func pathID(c echo.Context) (string, error) {
	raw := c.Param("id") // one path segment
	if raw == "" {       // more (a DOI's raw slashes): the wildcard route's
		raw = c.Param("*")
		if c.Path() == similarRoute {
			raw = strings.TrimSuffix(raw, "/similar")
		}
	}
	if raw == "" {
		return "", echo.ErrNotFound
	}
	id, err := raw, error(nil)
	if c.Request().URL.RawPath != "" {
		id, err = url.PathUnescape(id)
	}
	if err != nil || !papersearch.ValidID(id) {
		return "", invalid("the paper id in the path is not a valid id",
			wire.FieldProblem{Param: "id", Detail: papersearch.ErrBadID.Error()})
	}
	return papersearch.CanonicalID(id), nil
}

// paperRoute serves GET /v1/papers/{id} and GET /v1/papers/{id}/similar,
// the id raw (its slashes as they are: a DOI's) or percent-encoded; a path
// ending in /similar asks for the similar papers (an id ending in
// "/similar" is written %2Fsimilar). Metrics name the two routes apart.
func (s *Server) paperRoute(c echo.Context) error {
	if strings.HasSuffix(c.Param("*"), "/similar") {
		c.SetPath(similarRoute)
		return s.similar(c)
	}
	c.SetPath(paperRoutePath)
	return s.getPaper(c)
}

// readOnlySimilar answers 405 to a write (h: PATCH or DELETE of
// /v1/papers/*) of a path ending in /similar, which names a paper's
// similar papers, as the router answers for an id of one segment.
func readOnlySimilar(h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if strings.HasSuffix(c.Param("*"), "/similar") {
			c.SetPath(similarRoute)
			c.Response().Header().Set(echo.HeaderAllow, http.MethodGet+", "+http.MethodHead)
			return echo.ErrMethodNotAllowed
		}
		return h(c)
	}
}

// The routes a paper's path serves, as metrics and pathID name them.
const (
	paperRoutePath = "/v1/papers/:id"
	similarRoute   = "/v1/papers/:id/similar"
)
