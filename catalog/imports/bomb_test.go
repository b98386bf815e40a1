package imports

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/seeds/fetch"
)

// bombVenue is the venue the hostile OpenReview serves.
const bombVenue = "NeurIPS.cc/2026/Conference"

// TestGzipBomb: an OpenReview that answers a 600 KB gzip page inflating
// to 600 MiB (one note whose abstract is a run of a's) fails the import
// and the watch that read it, each once, with errors naming the limit,
// and the process that reads it stays within 300 MB of its memory at
// rest (the page uncapped took it from 15 MB to 3.4 GB; the bound is
// wider under the race detector). The import and the
// watch run in a child process of the test binary, whose memory is its
// own.
func TestGzipBomb(t *testing.T) {
	if url, ok := testenv.Child(); ok {
		readBomb(t, url)
		return
	}
	const inflated = 600 << 20
	page := testenv.GzipBomb(t, `{"count":1,"notes":[{"id":"bomb","forum":"bomb","pdate":1764000000000,"content":{"title":{"value":"Bomb"},"abstract":{"value":"`,
		'a', inflated, `"},"authors":{"value":["Ada Lovelace"]}}}]}`)
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Path != "/notes" || r.URL.Query().Get("content.venueid") != bombVenue || !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			http.Error(w, "not an OpenReview request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(page)
	}))
	defer srv.Close()
	start := time.Now()
	mem, _ := testenv.RunChild(t, srv.URL)
	t.Logf("a %d-byte gzip page inflating to %d MiB, read twice: the child at rest %d MB, at its peak %d MB, in %s",
		len(page), inflated>>20, mem.Resting>>20, mem.Peak>>20, time.Since(start).Round(time.Millisecond))
	if requests.Load() != 2 {
		t.Errorf("%d requests; want 2, the import's and the watch's, neither retried", requests.Load())
	}
	if grew, bound := mem.Peak-mem.Resting, testenv.MemoryBound(300<<20); grew > bound {
		t.Errorf("the child grew by %d MB reading the page; want under %d", grew>>20, bound>>20)
	}
}

// readBomb, in the child, imports the venue of the OpenReview at url as
// POST /v1/imports does, then runs a watch of it.
func readBomb(t *testing.T, url string) {
	env := newWatchEnv(t)
	env.cfg.OpenReviewURL = url
	log := &testenv.Buffer{}
	env.cfg.Log = slog.New(slog.NewTextHandler(log, nil))
	w := env.open(t)
	ctx := context.Background()
	watch, err := w.Add(ctx, WatchRequest{Source: "openreview", Target: bombVenue})
	if err != nil {
		t.Fatal(err)
	}
	jobs := NewJobs(catalog.New(env.eng, catalog.Options{}), env.cfg.Open, env.cfg.Log)
	defer jobs.Close()
	testenv.NoteResting(t)

	job, err := jobs.Start(JobRequest{Source: "openreview", Target: bombVenue})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); job.Status == "running" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if job, err = jobs.Get(job.ID); err != nil {
			t.Fatal(err)
		}
	}
	limit := fmt.Sprintf("%d MiB", fetch.MaxPageBytes>>20)
	if job.Status != "failed" || !strings.Contains(job.Error, limit) || job.Stored != 0 {
		t.Errorf("import %s, %d stored: %q; want failed, naming the %s limit", job.Status, job.Stored, job.Error, limit)
	}
	if logged := log.String(); !strings.Contains(logged, "OpenReview") || !strings.Contains(logged, url+"/notes?") ||
		!strings.Contains(logged, fetch.ErrTooLarge.Error()) || !strings.Contains(logged, limit) {
		t.Errorf("the log does not name the source, its address and the limit:\n%s", logged)
	}
	ran, err := w.RunHere(ctx, watch.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ran.Runs != 1 || !strings.Contains(ran.LastError, limit) || ran.LastAdded != 0 {
		t.Errorf("the watch's run: %+v; want it failed, naming the %s limit", ran, limit)
	}
}
