package api

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/catalog/imports"
)

// Close stops the running imports and waits for them: each keeps the
// batches it stored, and the same import again resumes.
func (s *Server) Close() {
	if s.imports != nil {
		s.imports.Close()
	}
}

// startImport answers POST /v1/imports: it validates the request, opens
// the source and starts the import, answering 202 with the job.
func (s *Server) startImport(c echo.Context) error {
	var req wire.ImportRequest
	if err := s.decode(c, BatchBodyFactor*s.maxBody, &req); err != nil {
		return err
	}
	job, err := s.beginImport(req)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/v1/imports/"+job.ID)
	return c.JSON(http.StatusAccepted, job)
}

// beginImport starts an import (POST /v1/imports, the MCP import tool),
// returning the job as it stands, or its error as a problem.
func (s *Server) beginImport(req wire.ImportRequest) (*wire.ImportJob, error) {
	if s.imports == nil {
		return nil, problem(http.StatusNotImplemented, "imports-unavailable", "this server does not import")
	}
	job, err := s.imports.Start(imports.JobRequest(req))
	return jobOf(job), err
}

// cancelImport answers POST /v1/imports/{id}/cancel: a running import
// stops after the batch it is storing (what it stored stays; the same
// import again resumes after it) and the answer is the job as it ended
// (202 if it is still storing); one that has ended is 409. The import
// stays readable, so this is no DELETE: after a DELETE a client may take
// the resource for gone.
func (s *Server) cancelImport(c echo.Context) error {
	if s.imports == nil {
		return fmt.Errorf("%w %q", imports.ErrNoJob, c.Param("id"))
	}
	job, stopped, err := s.imports.Cancel(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	if !stopped {
		return c.JSON(http.StatusAccepted, jobOf(job)) // still storing its last batch
	}
	return c.JSON(http.StatusOK, jobOf(job))
}

// importStatus answers GET /v1/imports/{id}.
func (s *Server) importStatus(c echo.Context) error {
	job, err := s.importJob(c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, job)
}

// importJob is the import of that id as it stands.
func (s *Server) importJob(id string) (*wire.ImportJob, error) {
	if s.imports == nil {
		return nil, fmt.Errorf("%w %q", imports.ErrNoJob, id)
	}
	job, err := s.imports.Get(id)
	return jobOf(job), err
}

// jobOf is an import job as the API answers it; nil for none.
func jobOf(j *imports.Job) *wire.ImportJob {
	if j == nil {
		return nil
	}
	out := wire.ImportJob{ID: j.ID, Source: j.Source, Target: j.Target, Tags: j.Tags, Status: j.Status, Error: j.Error,
		Read: j.Read, Stored: j.Stored, Rejected: j.Rejected, NoAbstract: j.NoAbstract, Merged: j.Merged, Embedded: j.Embedded,
		Rejections: make([]wire.ImportRejection, len(j.Rejections)), Summary: j.Summary, StartedAt: j.StartedAt, FinishedAt: j.FinishedAt}
	for i, r := range j.Rejections {
		out.Rejections[i] = wire.ImportRejection(r)
	}
	return &out
}
