package imports

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/papersearch/papersearch/search/storage"
)

// The jobs as the store keeps them (Jobs.Records), for every instance on
// it to answer and cancel.

// Kinds of the records of the jobs.
const (
	jobRecord    = "import"
	cancelRecord = "import-cancel"
)

// keepEvery is how often a running job's progress is written to the
// store, and how often it looks for a cancel asked of another instance.
const keepEvery = 250 * time.Millisecond

// aliveEvery is how often a running job says, in the store, that its
// instance is alive though it made no progress (a source slow to answer);
// a job running in the store that has not said so for deadAfter ran on an
// instance that stopped without ending it (killed).
const (
	aliveEvery = 2 * time.Second
	deadAfter  = 15 * time.Second
)

// jobDoc is a job as its record holds it: the job, and when its instance
// last said it runs it.
type jobDoc struct {
	Job
	Alive time.Time `json:"alive"`
}

// lostJob is the error of a job whose instance stopped without ending it.
const lostJob = "the server running this import stopped before it ended; importing again resumes after what was stored"

// keep writes the job of that id, as it stands, to the store.
func (j *Jobs) keep(id string) {
	if j.Records == nil {
		return
	}
	j.keepMu.Lock()
	defer j.keepMu.Unlock()
	job, err := j.Get(id)
	if err != nil {
		return
	}
	b, err := json.Marshal(jobDoc{Job: *job, Alive: time.Now().UTC()})
	if err == nil {
		err = j.Records.PutRecord(context.WithoutCancel(j.ctx), jobRecord, id, b)
	}
	if err != nil {
		j.log.Warn("import: its progress not kept in the store; other instances answer what they last read", "import", id, "error", err)
	}
}

// heedCancels stops a running job when another instance asks (a cancel
// record for it), until the job's context ends.
func (j *Jobs) heedCancels(ctx context.Context, id string, stop *jobStop) {
	defer j.wg.Done()
	t := time.NewTicker(keepEvery)
	defer t.Stop()
	alive := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-stop.done:
			return
		case <-t.C:
		}
		if time.Since(alive) >= aliveEvery {
			alive = time.Now()
			j.keep(id)
		}
		if _, err := j.Records.GetRecord(ctx, cancelRecord, id); err == nil {
			stop.cancel()
			return
		}
	}
}

// kept reads the job of that id from the store, or answers ErrNoJob.
func (j *Jobs) kept(ctx context.Context, id string) (*Job, error) {
	if j.Records == nil {
		return nil, fmt.Errorf("%w %q", ErrNoJob, id)
	}
	b, err := j.Records.GetRecord(ctx, jobRecord, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("%w %q", ErrNoJob, id)
	}
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", id, err)
	}
	var doc jobDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("import %s: %w", id, err)
	}
	job := doc.Job
	if job.Status == "running" && time.Since(doc.Alive) > deadAfter {
		job.Status, job.Error = "failed", lostJob
	}
	return &job, nil
}

// cancelElsewhere asks the instance running the job of that id (one the
// store keeps) to stop it, and waits up to CancelWait for it to have.
func (j *Jobs) cancelElsewhere(ctx context.Context, id string) (*Job, bool, error) {
	job, err := j.kept(ctx, id)
	if err != nil {
		return nil, false, err
	}
	if job.Status != "running" {
		return job, true, fmt.Errorf("import %s: %w (%s)", id, ErrJobEnded, job.Status)
	}
	if err := j.Records.PutRecord(ctx, cancelRecord, id, []byte(`{}`)); err != nil {
		return nil, false, fmt.Errorf("import %s: %w", id, err)
	}
	deadline := time.Now().Add(CancelWait)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(keepEvery / 2):
		}
		if job, err = j.kept(ctx, id); err != nil {
			return nil, false, err
		}
		if job.Status != "running" {
			return job, true, nil
		}
	}
	return job, false, nil
}
