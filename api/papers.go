package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/seeds"
)

// MaxIngestPapers bounds the papers of one POST /v1/papers.
const MaxIngestPapers = 1000

// IngestRequest is the body of POST /v1/papers: {"papers": [...]}, or a
// single paper object.
type IngestRequest struct {
	Papers []papersearch.Paper `json:"papers"`
}

// IngestResponse says what the ingest did. Every paper it names is stored
// durably when the response is sent.
type IngestResponse struct {
	search.IngestSummary
	IDs []string `json:"ids"`
}

// ingest adds papers, idempotently by id.
func (s *Server) ingest(c echo.Context) error {
	var req IngestRequest
	raw, err := s.readBody(c)
	if err != nil {
		return err
	}
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' && !bytes.Contains(t, []byte(`"papers"`)) {
		// A single paper.
		var p papersearch.Paper
		if err := decodeStrict(raw, &p); err != nil {
			return err
		}
		req.Papers = []papersearch.Paper{p}
	} else if err := decodeStrict(raw, &req); err != nil {
		return err
	}
	if len(req.Papers) == 0 || len(req.Papers) > MaxIngestPapers {
		return invalid(fmt.Sprintf("papers must hold 1 to %d papers", MaxIngestPapers),
			FieldProblem{Pointer: "/papers", Detail: fmt.Sprintf("holds %d papers", len(req.Papers))})
	}
	var problems []FieldProblem
	papers := make([]papersearch.Paper, len(req.Papers))
	for i, p := range req.Papers {
		done, err := seeds.Complete(p)
		if err != nil {
			problems = append(problems, FieldProblem{Pointer: fmt.Sprintf("/papers/%d", i), Detail: err.Error()})
			continue
		}
		papers[i] = done
	}
	if len(problems) > 0 {
		return invalid(fmt.Sprintf("%d of %d papers are invalid; nothing was stored", len(problems), len(papers)), problems...)
	}
	sum, err := s.engine.Ingest(c.Request().Context(), papers, nil)
	if err != nil {
		return err
	}
	ids := make([]string, len(papers))
	for i, p := range papers {
		ids[i] = p.ID
	}
	return c.JSON(http.StatusOK, IngestResponse{IngestSummary: sum, IDs: ids})
}

// deletePaper removes one paper.
func (s *Server) deletePaper(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	if err := s.engine.Delete(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// decodeStrict decodes one JSON value with no unknown fields.
func decodeStrict(raw []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonProblem(err)
	}
	if dec.More() {
		return problem(http.StatusBadRequest, "malformed-json", "the request body holds more than one JSON value")
	}
	return nil
}
