package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/search"
)

// MaxIngestPapers bounds the papers of one POST /v1/papers.
const MaxIngestPapers = 1000

// ingest adds papers, idempotently by id.
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
	var problems []wire.FieldProblem
	papers := make([]papersearch.Paper, len(req.Papers))
	for i, p := range req.Papers {
		done, err := papersearch.Complete(p)
		if err != nil {
			pointer := fmt.Sprintf("/papers/%d", i)
			if single {
				pointer = ""
			}
			var fe *papersearch.FieldError
			if errors.As(err, &fe) {
				pointer += "/" + fe.Field
			}
			problems = append(problems, wire.FieldProblem{Pointer: pointer, Detail: err.Error()})
			continue
		}
		papers[i] = done
	}
	if len(problems) > 0 {
		return invalid(fmt.Sprintf("%d of %d papers are invalid; nothing was stored", len(problems), len(papers)), problems...)
	}
	ctx, cancel := extendWriteDeadline(c, len(papers))
	defer cancel()
	// One batch, stored whole or not at all.
	sum, err := s.engine.Put(ctx, papers)
	if err != nil {
		p := toProblem(err)
		if errors.Is(err, search.ErrNothingStored) {
			p.Detail += "; nothing of the batch was stored"
		}
		return p
	}
	ids := make([]string, len(papers))
	for i, p := range papers {
		ids[i] = p.ID
	}
	return c.JSON(http.StatusOK, wire.IngestResponse{IngestSummary: sum, IDs: ids})
}

// deletePaper removes one paper.
func (s *Server) deletePaper(c echo.Context) error {
	c.SetPath(paperRoutePath)
	id, err := pathID(c)
	if err != nil {
		return err
	}
	if err := s.engine.Delete(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
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
