package imports

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/search/storage"
	"github.com/papersearch/papersearch/seeds"
	"github.com/papersearch/papersearch/seeds/fetch"
)

// Limits of the jobs.
const (
	// MaxRunning is how many imports may run at once.
	MaxRunning = 2
	// MaxPapers bounds a request's max.
	MaxPapers = 100_000
	// DefaultPapers is a request's max when it gives none.
	DefaultPapers = 1000
	// keptJobs is how many jobs are remembered; the oldest finished ones
	// are forgotten first.
	keptJobs = 200
	// reportedRejections is how many rejected records a job lists, and
	// rejectionBytes and rejectionDetail bound their text: a job's status
	// stays small whatever its records hold (100 rejections of 150 KB keys
	// made a 15 MB status).
	reportedRejections = 100
	rejectionBytes     = 32 << 10
	rejectionDetail    = 300
)

// Errors of the jobs.
var (
	ErrTooMany  = fmt.Errorf("%d imports are running; try again when one has finished", MaxRunning)
	ErrNoJob    = errors.New("no import has the id")
	ErrJobEnded = errors.New("the import has ended")
)

// Runner runs one import to its end: catalog.Catalog.Import.
type Runner interface {
	Import(ctx context.Context, src catalog.Source, opts catalog.ImportOptions) (catalog.ImportSummary, error)
}

// Opener opens the source of a request: Config.Open, or a test's.
type Opener func(ctx context.Context, r Request) (Opened, error)

// Jobs runs imports in the background and remembers how each went: one
// lock for the map and every job in it. With Records set, each job is also
// kept in the store (kind "import", written as it starts, about every
// second while it runs, and as it ends), so any instance on the store
// answers its progress, and a cancel asked of another instance (a record
// of kind "import-cancel") stops it within CancelWait.
type Jobs struct {
	run  Runner
	open Opener
	log  *slog.Logger
	// Records, if set before the first Start, keeps the jobs in the
	// service's store.
	Records storage.Records
	// keepMu makes each write of a job to the store read the job as it
	// stands then, so a late write never puts back an older state.
	keepMu sync.Mutex

	mu      sync.Mutex
	jobs    map[string]*Job
	stops   map[string]*jobStop // of the running jobs
	order   []string            // ids, oldest first
	running int

	ctx    context.Context // cancelled by Close: the jobs stop
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// jobStop stops one running job: cancel ends its context, done is closed
// once it has stopped.
type jobStop struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// NewJobs returns jobs that open sources with open and import with run.
func NewJobs(run Runner, open Opener, log *slog.Logger) *Jobs {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Jobs{run: run, open: open, log: log, jobs: map[string]*Job{}, stops: map[string]*jobStop{}, ctx: ctx, cancel: cancel}
}

// Close stops the running imports and waits for them: each keeps the
// batches it stored, and the same import again resumes.
func (j *Jobs) Close() {
	j.cancel()
	j.wg.Wait()
}

// request checks an import request as POST /v1/imports and MCP take it
// and makes the Request it names: a *papersearch.FieldError wrapping
// ErrBadRequest names the field at fault.
func request(req JobRequest) (Request, error) {
	k, ok := lookup(req.Source)
	switch {
	case !ok || !k.http:
		return Request{}, badRequest("source", fmt.Sprintf("must be %s, not %q", strings.Join(HTTPSources(), ", "), req.Source))
	case k.file && req.Target != "":
		return Request{}, badRequest("target", "must be absent: "+req.Source+" imports the file's text, sent in content (the server opens no file or URL of its own for it)")
	case k.file && req.Content == "":
		return Request{}, badRequest("content", "must not be empty: "+req.Source+" imports the file's text sent in it")
	case k.file && req.Max != nil:
		return Request{}, badRequest("max", "must be absent: "+req.Source+" imports the whole file in content")
	case !k.file && req.Target == "":
		return Request{}, badRequest("target", "must not be empty: "+req.Source+" imports what it names")
	case strings.ContainsFunc(req.Target, RefusedInTarget):
		return Request{}, badRequest("target", errControlTarget)
	case !k.file && req.Content != "":
		return Request{}, badRequest("content", "must be absent: "+req.Source+" reads target, not a file")
	case req.Max != nil && (*req.Max < 1 || *req.Max > MaxPapers):
		return Request{}, badRequest("max", fmt.Sprintf("must be between 1 and %d, not %d", MaxPapers, *req.Max))
	}
	if _, ok := papersearch.CleanTags(req.Tags); !ok {
		return Request{}, badRequest("tags", "must be valid: "+papersearch.ErrBadTag.Error())
	}
	max := DefaultPapers
	if req.Max != nil {
		max = *req.Max
	}
	return Request{Kind: req.Source, Target: req.Target, File: strings.NewReader(req.Content), Max: max, Tags: req.Tags}, nil
}

// Start checks req, opens its source and starts the import in the
// background, returning the job as it stands. Its errors: a
// *papersearch.FieldError wrapping ErrBadRequest, ErrTooMany, or the
// opener's.
func (j *Jobs) Start(req JobRequest) (*Job, error) {
	r, err := request(req)
	if err != nil {
		return nil, err
	}
	j.mu.Lock()
	if j.running >= MaxRunning {
		j.mu.Unlock()
		return nil, ErrTooMany
	}
	j.running++
	j.mu.Unlock()
	// The source is opened under the job's own context: a source reads
	// its upstream with the context it was opened with, so a cancel must
	// end that, not only the import reading from it.
	ctx, cancel := context.WithCancel(j.ctx)
	opened, err := j.open(ctx, r)
	if err != nil {
		cancel()
		j.mu.Lock()
		j.running--
		j.mu.Unlock()
		return nil, err
	}
	id := make([]byte, 8)
	rand.Read(id)
	job := &Job{ID: "imp_" + hex.EncodeToString(id), Source: req.Source, Target: req.Target, Tags: opened.Tags,
		Status: "running", Rejections: []Rejection{}, StartedAt: time.Now().UTC()}
	if job.Tags == nil {
		job.Tags = []string{}
	}
	stop := &jobStop{cancel: cancel, done: make(chan struct{})}
	j.mu.Lock()
	j.add(job)
	j.stops[job.ID] = stop
	j.mu.Unlock()
	j.keep(job.ID)
	j.wg.Add(1)
	go j.runJob(ctx, job.ID, opened)
	if j.Records != nil {
		j.wg.Add(1)
		go j.heedCancels(ctx, job.ID, stop)
	}
	return j.Get(job.ID)
}

// add records a job, forgetting the oldest finished ones beyond keptJobs.
// The caller holds j.mu.
func (j *Jobs) add(job *Job) {
	j.jobs[job.ID] = job
	j.order = append(j.order, job.ID)
	for i := 0; len(j.jobs) > keptJobs && i < len(j.order); {
		if old := j.jobs[j.order[i]]; old.Status != "running" {
			delete(j.jobs, old.ID)
			j.order = slices.Delete(j.order, i, i+1)
			continue
		}
		i++
	}
}

// Get returns a copy of the job of that id: this instance's, else the
// one the store keeps (another instance's), or ErrNoJob.
func (j *Jobs) Get(id string) (*Job, error) {
	if job, ok := j.local(id); ok {
		return job, nil
	}
	return j.kept(context.WithoutCancel(j.ctx), id)
}

// local returns a copy of the job of that id if this instance runs or ran
// it.
func (j *Jobs) local(id string) (*Job, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	job, ok := j.jobs[id]
	if !ok {
		return nil, false
	}
	cp := *job
	cp.Rejections = slices.Clone(job.Rejections)
	return &cp, true
}

// CancelWait bounds how long Cancel waits for a job to stop, so that a
// cancel is answered within it; the job itself stops at its next record.
const CancelWait = time.Second

// Cancel stops a running import (what it stored stays; the same import
// again resumes after it) and returns the job as it ended, with stopped
// false if it had not stopped within CancelWait.
// Its errors: ErrNoJob, ErrJobEnded, or ctx's.
func (j *Jobs) Cancel(ctx context.Context, id string) (job *Job, stopped bool, err error) {
	j.mu.Lock()
	_, known := j.jobs[id]
	stop := j.stops[id]
	j.mu.Unlock()
	if !known {
		return j.cancelElsewhere(ctx, id)
	}
	if stop == nil {
		job, err := j.Get(id)
		if err != nil {
			return nil, false, err
		}
		return job, true, fmt.Errorf("import %s: %w (%s)", id, ErrJobEnded, job.Status)
	}
	stop.cancel()
	select {
	case <-stop.done:
		stopped = true
	case <-time.After(CancelWait):
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	job, err = j.Get(id)
	return job, stopped, err
}

// runJob runs one job to its end, or until ctx ends (Cancel, Close), and
// records how it went.
func (j *Jobs) runJob(ctx context.Context, id string, opened Opened) {
	defer j.wg.Done()
	update := func(f func(job *Job)) {
		j.mu.Lock()
		defer j.mu.Unlock()
		f(j.jobs[id])
	}
	var kept time.Time
	sum, err := j.run.Import(ctx, opened.Source, catalog.ImportOptions{Tags: opened.Tags, Progress: func(p catalog.ImportProgress) {
		update(func(job *Job) {
			job.Read, job.Stored, job.Rejected, job.Embedded = p.Read, p.Stored, p.Rejected, p.Embedded
		})
		if time.Since(kept) >= keepEvery {
			kept = time.Now()
			j.keep(id)
		}
	}})
	cancelled := err != nil && ctx.Err() != nil && j.ctx.Err() == nil
	update(func(job *Job) {
		now := time.Now().UTC()
		job.FinishedAt = &now
		job.Read, job.Stored, job.Rejected, job.NoAbstract = sum.Read, sum.New+sum.Updated+sum.Unchanged, sum.Rejected, sum.NoAbstract
		job.Merged, job.Embedded = sum.Merged, sum.Embedded
		job.Rejections = boundedRejections(sum.Rejections)
		summary := sum.IngestSummary
		job.Summary = &summary
		switch {
		case cancelled:
			job.Status = "cancelled"
		case err != nil:
			job.Status, job.Error = "failed", publicError(err)
		default:
			job.Status = "done"
		}
		j.running--
		if stop := j.stops[id]; stop != nil {
			close(stop.done)
			delete(j.stops, id)
		}
	})
	j.keep(id)
	if j.Records != nil {
		j.Records.DeleteRecord(context.WithoutCancel(j.ctx), cancelRecord, id) // none, unless another instance asked
	}
	switch {
	case cancelled:
		j.log.Info("import cancelled; what it stored stays, and the same import again resumes", "import", id, "read", sum.Read, "stored", sum.New+sum.Updated+sum.Unchanged)
	case err != nil:
		j.log.Warn("import failed", "import", id, "error", err)
	default:
		j.log.Info("import done", "import", id, "read", sum.Read, "new", sum.New, "updated", sum.Updated,
			"rejected", sum.Rejected, "took", sum.Took.Round(time.Millisecond))
	}
}

// boundedRejections lists the first rejected records, each reason cut to
// rejectionDetail bytes, all of them to rejectionBytes.
func boundedRejections(rejected []*seeds.LineError) []Rejection {
	out := []Rejection{}
	total := 0
	for _, le := range rejected[:min(len(rejected), reportedRejections)] {
		detail := boundedText(le.Err.Error(), rejectionDetail)
		if total += len(detail); total > rejectionBytes {
			break
		}
		out = append(out, Rejection{Record: le.Line, Detail: detail})
	}
	return out
}

// boundedText is s cut to at most n bytes (and an ellipsis) at a
// character's start.
func boundedText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// publicError is what a failed import's status says: a stable, readable
// reason, never the error's own text (an upstream's body with its token,
// a contact address, a socket address); the log has that, under the
// import's id.
func publicError(err error) string {
	var fe *seeds.FormatError
	switch {
	case errors.As(err, &fe):
		// The file the client sent is at fault: saying how is safe.
		return boundedText(fe.Error(), rejectionDetail) + "; fix the file and import it again (what was stored stays)"
	case errors.Is(err, fetch.ErrUnreachable):
		return "the source could not be reached (its host name does not resolve, or there is no network); the log has the details"
	case errors.Is(err, fetch.ErrTooLarge):
		return fmt.Sprintf("the source answered a page of more than %d MiB (counted decompressed), the most one may be; the log has its address", fetch.MaxPageBytes>>20)
	case errors.Is(err, fetch.ErrRefused):
		return "the source refused the request (the target may not exist there); the log has its answer"
	case errors.Is(err, storage.ErrUnavailable):
		return "the store or the embedding endpoint was unavailable; import again to resume after what was stored"
	case errors.Is(err, context.Canceled):
		return "the server stopped while importing; importing again resumes after what was stored"
	case errors.Is(err, context.DeadlineExceeded):
		return "the source or a dependency did not answer in time; import again to resume after what was stored"
	}
	return "the import failed; the log has the details under this import's id, and importing again resumes after what was stored"
}
