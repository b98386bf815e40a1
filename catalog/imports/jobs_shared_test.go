package imports

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/searchtest"
)

// TestJobsAreTheStores: two instances' jobs on one store. An import
// started by one is answered by the other, its progress as it goes; a
// cancel asked of the other stops it within CancelWait (what it stored
// stays); once ended, both answer how it ended, and a second cancel is
// ErrJobEnded.
func TestJobsAreTheStores(t *testing.T) {
	eng, store := searchtest.Engine(t, hashvec.Embedder{Model: embed.ModelInfo{Name: "test-model", Dim: 8}}, search.Options{})
	cat := catalog.New(eng, catalog.Options{Batch: 1})
	ctx := context.Background()
	// A library of 2,000 entries: long enough to be cancelled midway.
	var lib strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&lib, "@misc{shared%d, title = {Shared %d}, abstract = {A study %d of shared imports.}}\n", i, i, i)
	}
	// Each record read a millisecond apart: the import runs for seconds.
	open := func(ctx context.Context, r Request) (Opened, error) {
		o, err := Config{}.Open(ctx, r)
		o.Source = slowSource{o.Source}
		return o, err
	}
	a, b := NewJobs(cat, open, nil), NewJobs(cat, open, nil)
	a.Records, b.Records = store, store
	defer a.Close()
	defer b.Close()
	job, err := a.Start(JobRequest{Source: "bibtex", Content: lib.String()})
	if err != nil {
		t.Fatal(err)
	}
	var seen *Job
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if seen, err = b.Get(job.ID); err != nil {
			t.Fatalf("the other instance: %v", err)
		}
		if seen.Stored > 0 {
			break
		}
	}
	if seen.Status != "running" || seen.Stored == 0 {
		t.Fatalf("the other instance's view of a running import: %+v", seen)
	}
	began := time.Now()
	ended, stopped, err := b.Cancel(ctx, job.ID)
	took := time.Since(began)
	if err != nil || !stopped || ended.Status != "cancelled" || took > CancelWait+200*time.Millisecond {
		t.Fatalf("cancel through the other instance: %+v stopped=%v %v in %v", ended, stopped, err, took)
	}
	t.Logf("reliability: an import cancelled through another instance stopped in %v, %d papers stored", took.Round(time.Millisecond), ended.Stored)
	mine, _ := a.Get(job.ID)
	if mine.Status != "cancelled" || mine.Stored != ended.Stored || mine.Stored == 2000 {
		t.Errorf("the running instance's view: %+v, the other's %+v", mine, ended)
	}
	if _, _, err := b.Cancel(ctx, job.ID); !errors.Is(err, ErrJobEnded) {
		t.Errorf("cancel an ended import: %v", err)
	}
	if _, err := b.Get("imp_0000000000000000"); !errors.Is(err, ErrNoJob) {
		t.Errorf("an unknown import: %v", err)
	}
	// A job whose instance was killed mid-run: running in the store, its
	// instance silent for longer than deadAfter, it is answered failed.
	lost, _ := json.Marshal(jobDoc{Job: Job{ID: "imp_1111111111111111", Source: "arxiv", Status: "running"},
		Alive: time.Now().Add(-time.Minute)})
	if err := store.PutRecord(ctx, jobRecord, "imp_1111111111111111", lost); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Get("imp_1111111111111111"); err != nil || got.Status != "failed" || got.Error != lostJob {
		t.Errorf("a killed instance's import: %+v %v", got, err)
	}
}

// slowSource hands out its source's records a millisecond apart.
type slowSource struct{ catalog.Source }

func (s slowSource) Next() (papersearch.Paper, error) {
	time.Sleep(time.Millisecond)
	return s.Source.Next()
}

// TestCancelEndsTheSourcesWait: a cancel stops an import whose source is
// waiting on its upstream at once, for the source was opened with the
// job's context (it had been opened with the context of all jobs, so an
// arXiv source waiting on a silent server went on for minutes).
func TestCancelEndsTheSourcesWait(t *testing.T) {
	eng, _ := searchtest.Engine(t, hashvec.Embedder{Model: embed.ModelInfo{Name: "test-model", Dim: 8}}, search.Options{})
	waiting := make(chan struct{}, 1)
	open := func(ctx context.Context, r Request) (Opened, error) {
		return Opened{Source: waitingSource{ctx, waiting}}, nil
	}
	jobs := NewJobs(catalog.New(eng, catalog.Options{}), open, nil)
	defer jobs.Close()
	job, err := jobs.Start(JobRequest{Source: "arxiv", Target: "cat:cs.LG"})
	if err != nil {
		t.Fatal(err)
	}
	<-waiting // the import is waiting on its source
	began := time.Now()
	ended, stopped, err := jobs.Cancel(context.Background(), job.ID)
	if took := time.Since(began); err != nil || !stopped || ended.Status != "cancelled" || took >= CancelWait {
		t.Errorf("cancel an import waiting on its source: %+v stopped=%v %v in %v", ended, stopped, err, took)
	}
}

// waitingSource is a source whose upstream never answers: Next says it is
// waiting, then waits until the context it was opened with ends.
type waitingSource struct {
	ctx     context.Context
	waiting chan<- struct{}
}

func (s waitingSource) Next() (papersearch.Paper, error) {
	select {
	case s.waiting <- struct{}{}:
	default:
	}
	<-s.ctx.Done()
	return papersearch.Paper{}, s.ctx.Err()
}
