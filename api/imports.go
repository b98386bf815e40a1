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

	"github.com/labstack/echo/v4"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/search"
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
	// reportedRejections is how many rejected records a job lists.
	reportedRejections = 100
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
	order   []string // ids, oldest first
	running int

	ctx    context.Context // cancelled by Close: the jobs stop
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newImports() *imports {
	ctx, cancel := context.WithCancel(context.Background())
	return &imports{jobs: map[string]*wire.ImportJob{}, ctx: ctx, cancel: cancel}
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
	if s.importer == nil {
		return problem(http.StatusNotImplemented, "imports-unavailable", "this server does not import")
	}
	var req wire.ImportRequest
	if err := s.decode(c, BatchBodyFactor*s.maxBody, &req); err != nil {
		return err
	}
	file, ok := importSource(req.Source)
	switch {
	case !ok:
		return invalid("source must be openreview, arxiv, openalex, bibtex or csl",
			wire.FieldProblem{Pointer: "/source", Detail: fmt.Sprintf("is %q", req.Source)})
	case file && req.Content == "":
		return invalid(req.Source+" imports the file in content", wire.FieldProblem{Pointer: "/content", Detail: "must not be empty"})
	case file && (req.Target != "" || req.Max != nil):
		return invalid(req.Source+" imports the file in content and takes no target or max",
			wire.FieldProblem{Pointer: "/target", Detail: "must be absent for a file source"})
	case !file && req.Target == "":
		return invalid(req.Source+" imports what target names", wire.FieldProblem{Pointer: "/target", Detail: "must not be empty"})
	case !file && req.Content != "":
		return invalid(req.Source+" reads target, not a file", wire.FieldProblem{Pointer: "/content", Detail: "must be absent for a network source"})
	case req.Max != nil && (*req.Max < 1 || *req.Max > MaxImportPapers):
		return invalid(fmt.Sprintf("max must be between 1 and %d", MaxImportPapers),
			wire.FieldProblem{Pointer: "/max", Detail: fmt.Sprintf("is %d", *req.Max)})
	}
	if req.Max == nil {
		limit := DefaultImportPapers
		req.Max = &limit
	}
	if _, ok := papersearch.CleanTags(req.Tags); !ok {
		return invalid("invalid tags", wire.FieldProblem{Pointer: "/tags", Detail: papersearch.ErrBadTag.Error()})
	}

	im := s.imports
	im.mu.Lock()
	if im.running >= MaxRunningImports {
		im.mu.Unlock()
		p := problem(http.StatusTooManyRequests, "too-many-imports",
			fmt.Sprintf("%d imports are running; try again when one has finished", im.running))
		p.RetryAfter = 10
		return p
	}
	im.running++
	im.mu.Unlock()
	src, own, release, err := s.importer(im.ctx, req)
	if err != nil {
		im.mu.Lock()
		im.running--
		im.mu.Unlock()
		if errors.Is(err, ErrBadImport) {
			return invalid(err.Error(), wire.FieldProblem{Pointer: "/target", Detail: err.Error()})
		}
		return err
	}
	tags, _ := papersearch.CleanTags(slices.Concat(req.Tags, own))
	id := make([]byte, 8)
	rand.Read(id)
	job := &wire.ImportJob{ID: "imp_" + hex.EncodeToString(id), Source: req.Source, Target: req.Target, Tags: tags,
		Status: "running", Rejections: []wire.ImportRejection{}, StartedAt: time.Now().UTC()}
	if job.Tags == nil {
		job.Tags = []string{}
	}
	im.mu.Lock()
	im.add(job)
	im.mu.Unlock()
	im.wg.Add(1)
	go s.runImport(job.ID, src, release, tags)
	c.Response().Header().Set(echo.HeaderLocation, "/v1/imports/"+job.ID)
	return c.JSON(http.StatusAccepted, im.get(job.ID))
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

// runImport runs one job to its end and records how it went.
func (s *Server) runImport(id string, src search.Source, release func(), tags []string) {
	im := s.imports
	defer im.wg.Done()
	defer release()
	update := func(f func(job *wire.ImportJob)) {
		im.mu.Lock()
		defer im.mu.Unlock()
		f(im.jobs[id])
	}
	sum, err := s.engine.Import(im.ctx, src, search.ImportOptions{Tags: tags, Progress: func(p search.ImportProgress) {
		update(func(job *wire.ImportJob) { job.Read, job.Stored, job.Rejected = p.Read, p.Stored, p.Rejected })
	}})
	update(func(job *wire.ImportJob) {
		now := time.Now().UTC()
		job.FinishedAt = &now
		job.Read, job.Stored, job.Rejected, job.NoAbstract = sum.Read, sum.New+sum.Updated+sum.Unchanged, sum.Rejected, sum.NoAbstract
		job.Merged = sum.Merged
		for _, le := range sum.Rejections[:min(len(sum.Rejections), reportedRejections)] {
			job.Rejections = append(job.Rejections, wire.ImportRejection{Record: le.Line, Detail: le.Err.Error()})
		}
		summary := sum.IngestSummary
		job.Summary = &summary
		job.Status = "done"
		if err != nil {
			job.Status, job.Error = "failed", err.Error()
		}
		im.running--
	})
	if err != nil {
		s.log.Warn("import failed", "import", id, "error", err)
		return
	}
	s.log.Info("import done", "import", id, "read", sum.Read, "new", sum.New, "updated", sum.Updated,
		"rejected", sum.Rejected, "took", sum.Took.Round(time.Millisecond))
}

// importStatus answers GET /v1/imports/{id}.
func (s *Server) importStatus(c echo.Context) error {
	job := s.imports.get(c.Param("id"))
	if job == nil {
		return problem(http.StatusNotFound, "import-not-found", fmt.Sprintf("no import has the id %q", c.Param("id")))
	}
	return c.JSON(http.StatusOK, job)
}
