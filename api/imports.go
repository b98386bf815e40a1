package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/seeds"
	"github.com/papersearch/papersearch/seeds/fetch"
)

// Importer opens the source an import request names and returns it with
// the tags its papers get by default and a function that releases it. An
// error wrapping ErrBadImport is the request's fault (400).
type Importer func(ctx context.Context, req wire.ImportRequest) (search.Source, []string, func(), error)

// ErrBadImport marks an import request that names no usable source.
var ErrBadImport = errors.New("invalid import request")

// Limits of imports over HTTP.
const (
	// MaxRunningImports is how many imports may run at once; more are
	// answered 429.
	MaxRunningImports = 2
	// MaxImportPapers bounds an arxiv or openalex import's max.
	MaxImportPapers = 100_000
	// DefaultImportPapers is an arxiv or openalex import's max when unset.
	DefaultImportPapers = 1000
	// keptImports is how many jobs GET /v1/imports/{id} remembers; the
	// oldest finished ones are forgotten first.
	keptImports = 200
	// reportedRejections is how many rejected records a job lists, and
	// rejectionBytes and rejectionDetail bound their text: a job's status
	// stays small whatever its records hold (100 rejections of 150 KB keys
	// made a 15 MB status).
	reportedRejections = 100
	rejectionBytes     = 32 << 10
	rejectionDetail    = 300
)

// importSource reports whether POST /v1/imports takes source, and whether
// it reads Content (a file) rather than Target.
func importSource(source string) (file, ok bool) {
	switch source {
	case "openreview", "arxiv", "openalex":
		return false, true
	case "bibtex", "csl":
		return true, true
	}
	return false, false
}

// imports owns the import jobs: one lock for the map and every job in it.
type imports struct {
	mu      sync.Mutex
	jobs    map[string]*wire.ImportJob
	stops   map[string]*jobStop // of the running jobs
	order   []string            // ids, oldest first
	running int

	ctx    context.Context // cancelled by Close: the jobs stop
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newImports() *imports {
	ctx, cancel := context.WithCancel(context.Background())
	return &imports{jobs: map[string]*wire.ImportJob{}, stops: map[string]*jobStop{}, ctx: ctx, cancel: cancel}
}

// jobStop stops one running job: cancel ends its context, done is closed
// once it has stopped.
type jobStop struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// Close stops the running imports and waits for them: each keeps the
// batches it stored, and the same import again resumes.
func (s *Server) Close() {
	s.imports.cancel()
	s.imports.wg.Wait()
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

// beginImport checks an import request and starts it in the background
// (POST /v1/imports, the MCP import tool), returning the job as it stands.
func (s *Server) beginImport(req wire.ImportRequest) (*wire.ImportJob, error) {
	if s.importer == nil {
		return nil, problem(http.StatusNotImplemented, "imports-unavailable", "this server does not import")
	}
	file, ok := importSource(req.Source)
	switch {
	case !ok:
		return nil, invalid("source must be openreview, arxiv, openalex, bibtex or csl",
			wire.FieldProblem{Pointer: "/source", Detail: fmt.Sprintf("is %q", req.Source)})
	case file && req.Content == "":
		return nil, invalid(req.Source+" imports the file in content", wire.FieldProblem{Pointer: "/content", Detail: "must not be empty"})
	case file && (req.Target != "" || req.Max != nil):
		return nil, invalid(req.Source+" imports the file in content and takes no target or max",
			wire.FieldProblem{Pointer: "/target", Detail: "must be absent for a file source"})
	case !file && req.Target == "":
		return nil, invalid(req.Source+" imports what target names", wire.FieldProblem{Pointer: "/target", Detail: "must not be empty"})
	case !file && req.Content != "":
		return nil, invalid(req.Source+" reads target, not a file", wire.FieldProblem{Pointer: "/content", Detail: "must be absent for a network source"})
	case req.Max != nil && (*req.Max < 1 || *req.Max > MaxImportPapers):
		return nil, invalid(fmt.Sprintf("max must be between 1 and %d", MaxImportPapers),
			wire.FieldProblem{Pointer: "/max", Detail: fmt.Sprintf("is %d", *req.Max)})
	}
	if req.Max == nil {
		limit := DefaultImportPapers
		req.Max = &limit
	}
	if _, ok := papersearch.CleanTags(req.Tags); !ok {
		return nil, invalid("invalid tags", wire.FieldProblem{Pointer: "/tags", Detail: papersearch.ErrBadTag.Error()})
	}

	im := s.imports
	im.mu.Lock()
	if im.running >= MaxRunningImports {
		im.mu.Unlock()
		p := problem(http.StatusTooManyRequests, "too-many-imports",
			fmt.Sprintf("%d imports are running; try again when one has finished", im.running))
		p.RetryAfter = 10
		return nil, p
	}
	im.running++
	im.mu.Unlock()
	src, own, release, err := s.importer(im.ctx, req)
	if err != nil {
		im.mu.Lock()
		im.running--
		im.mu.Unlock()
		if errors.Is(err, ErrBadImport) {
			return nil, invalid(err.Error(), wire.FieldProblem{Pointer: "/target", Detail: err.Error()})
		}
		return nil, err
	}
	tags, _ := papersearch.CleanTags(slices.Concat(req.Tags, own))
	id := make([]byte, 8)
	rand.Read(id)
	job := &wire.ImportJob{ID: "imp_" + hex.EncodeToString(id), Source: req.Source, Target: req.Target, Tags: tags,
		Status: "running", Rejections: []wire.ImportRejection{}, StartedAt: time.Now().UTC()}
	if job.Tags == nil {
		job.Tags = []string{}
	}
	ctx, cancel := context.WithCancel(im.ctx)
	stop := &jobStop{cancel: cancel, done: make(chan struct{})}
	im.mu.Lock()
	im.add(job)
	im.stops[job.ID] = stop
	im.mu.Unlock()
	im.wg.Add(1)
	go s.runImport(ctx, job.ID, src, release, tags)
	return im.get(job.ID), nil
}

// add records a job, forgetting the oldest finished ones beyond
// keptImports. The caller holds im.mu.
func (im *imports) add(job *wire.ImportJob) {
	im.jobs[job.ID] = job
	im.order = append(im.order, job.ID)
	for i := 0; len(im.jobs) > keptImports && i < len(im.order); {
		if old := im.jobs[im.order[i]]; old.Status != "running" {
			delete(im.jobs, old.ID)
			im.order = slices.Delete(im.order, i, i+1)
			continue
		}
		i++
	}
}

// get returns a copy of a job, or nil.
func (im *imports) get(id string) *wire.ImportJob {
	im.mu.Lock()
	defer im.mu.Unlock()
	job, ok := im.jobs[id]
	if !ok {
		return nil
	}
	cp := *job
	cp.Rejections = slices.Clone(job.Rejections)
	return &cp
}

// runImport runs one job to its end, or until ctx ends (DELETE, Close),
// and records how it went.
func (s *Server) runImport(ctx context.Context, id string, src search.Source, release func(), tags []string) {
	im := s.imports
	defer im.wg.Done()
	defer release()
	update := func(f func(job *wire.ImportJob)) {
		im.mu.Lock()
		defer im.mu.Unlock()
		f(im.jobs[id])
	}
	sum, err := s.engine.Import(ctx, src, search.ImportOptions{Tags: tags, Progress: func(p search.ImportProgress) {
		update(func(job *wire.ImportJob) { job.Read, job.Stored, job.Rejected = p.Read, p.Stored, p.Rejected })
	}})
	cancelled := err != nil && ctx.Err() != nil && s.imports.ctx.Err() == nil
	update(func(job *wire.ImportJob) {
		now := time.Now().UTC()
		job.FinishedAt = &now
		job.Read, job.Stored, job.Rejected, job.NoAbstract = sum.Read, sum.New+sum.Updated+sum.Unchanged, sum.Rejected, sum.NoAbstract
		job.Merged = sum.Merged
		job.Rejections = boundedRejections(sum.Rejections)
		summary := sum.IngestSummary
		job.Summary = &summary
		switch {
		case cancelled:
			job.Status = "cancelled"
		case err != nil:
			job.Status, job.Error = "failed", publicImportError(err)
		default:
			job.Status = "done"
		}
		im.running--
		if stop := im.stops[id]; stop != nil {
			close(stop.done)
			delete(im.stops, id)
		}
	})
	switch {
	case cancelled:
		s.log.Info("import cancelled; what it stored stays, and the same import again resumes", "import", id, "read", sum.Read, "stored", sum.New+sum.Updated+sum.Unchanged)
	case err != nil:
		s.log.Warn("import failed", "import", id, "error", err)
	default:
		s.log.Info("import done", "import", id, "read", sum.Read, "new", sum.New, "updated", sum.Updated,
			"rejected", sum.Rejected, "took", sum.Took.Round(time.Millisecond))
	}
}

// boundedRejections lists the first rejected records, each reason cut to
// rejectionDetail bytes, all of them to rejectionBytes.
func boundedRejections(rejected []*seeds.LineError) []wire.ImportRejection {
	out := []wire.ImportRejection{}
	total := 0
	for _, le := range rejected[:min(len(rejected), reportedRejections)] {
		detail := le.Err.Error()
		if len(detail) > rejectionDetail {
			cut := rejectionDetail
			for cut > 0 && !utf8.RuneStart(detail[cut]) {
				cut--
			}
			detail = detail[:cut] + "…"
		}
		if total += len(detail); total > rejectionBytes {
			break
		}
		out = append(out, wire.ImportRejection{Record: le.Line, Detail: detail})
	}
	return out
}

// publicImportError is what a failed import's status says: a stable,
// readable reason, never the error's own text (an upstream's body with
// its token, a contact address, a socket address); the log has that,
// under the import's id.
func publicImportError(err error) string {
	switch {
	case errors.Is(err, fetch.ErrUnreachable):
		return "the source could not be reached (its host name does not resolve, or there is no network); the log has the details"
	case errors.Is(err, fetch.ErrRefused):
		return "the source refused the request (the target may not exist there); the log has its answer"
	case errors.Is(err, search.ErrUnavailable):
		return "the store or the embedding endpoint was unavailable; import again to resume after what was stored"
	case errors.Is(err, context.Canceled):
		return "the server stopped while importing; importing again resumes after what was stored"
	case errors.Is(err, context.DeadlineExceeded):
		return "the source or a dependency did not answer in time; import again to resume after what was stored"
	}
	return "the import failed; the log has the details under this import's id, and importing again resumes after what was stored"
}

// cancelImport answers DELETE /v1/imports/{id}: a running import stops
// after the batch it is storing (what it stored stays; the same import
// again resumes after it) and the answer is the job as it ended; one that
// has ended is 409.
func (s *Server) cancelImport(c echo.Context) error {
	id := c.Param("id")
	im := s.imports
	im.mu.Lock()
	job, stop := im.jobs[id], im.stops[id]
	im.mu.Unlock()
	if job == nil {
		return problem(http.StatusNotFound, "import-not-found", fmt.Sprintf("no import has the id %q", id))
	}
	if stop == nil {
		return problem(http.StatusConflict, "import-ended", fmt.Sprintf("import %s has ended (%s)", id, im.get(id).Status))
	}
	stop.cancel()
	select {
	case <-stop.done:
		return c.JSON(http.StatusOK, im.get(id))
	case <-time.After(30 * time.Second):
		return c.JSON(http.StatusAccepted, im.get(id)) // still storing its last batch
	case <-c.Request().Context().Done():
		return c.Request().Context().Err()
	}
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
	job := s.imports.get(id)
	if job == nil {
		return nil, problem(http.StatusNotFound, "import-not-found", fmt.Sprintf("no import has the id %q", id))
	}
	return job, nil
}
