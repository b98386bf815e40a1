package imports

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/searchtest"
	"github.com/papersearch/papersearch/seeds/fetch/fetchtest"
)

// clock is a test's time, moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// watchEnv is what the watch tests run against: an engine over a fresh
// store (vectors from hashvec: the runs, not a model, are what is tested),
// a data folder, the import configuration reading the fakes at their
// URLs, and the clock.
type watchEnv struct {
	eng   *search.Engine
	cfg   Config
	path  string
	clock *clock
}

func newWatchEnv(t *testing.T) *watchEnv { return newWatchEnvTB(t) }

func newWatchEnvTB(t testing.TB) *watchEnv {
	t.Helper()
	eng, _ := searchtest.Engine(t, hashvec.Embedder{Model: embed.ModelInfo{Name: "test-model", Dim: 8}}, search.Options{})
	dir := t.TempDir()
	return &watchEnv{eng: eng, path: filepath.Join(dir, "watches.db"), clock: &clock{t: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)},
		cfg: Config{DataDir: dir, Store: "embedded test", OpenAlexEmail: "me@example.org", Clients: NewClients()}}
}

// open opens the watches as a server process on the folder does.
func (e *watchEnv) open(t *testing.T) *Watches { return e.openTB(t) }

func (e *watchEnv) openTB(t testing.TB) *Watches {
	t.Helper()
	w, err := OpenWatches(context.Background(), e.path, catalog.New(e.eng, catalog.Options{}), e.cfg.Open, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Now = e.clock.now
	t.Cleanup(func() { w.Close() })
	return w
}

// runDue starts the due watches and waits for their runs.
func runDue(t *testing.T, w *Watches) {
	t.Helper()
	if err := w.StartDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.Wait()
}

func get(t *testing.T, w *Watches, id string) Watch {
	t.Helper()
	got, err := w.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// stored counts the papers stored.
func (e *watchEnv) stored(t *testing.T) int {
	t.Helper()
	info, err := e.eng.Index(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.Papers
}

// tagged counts the papers holding tag (up to 2000).
func (e *watchEnv) tagged(t *testing.T, tag string) int {
	t.Helper()
	ps, err := e.eng.CollectionPapers(context.Background(), tag)
	if err != nil {
		t.Fatal(err)
	}
	return len(ps)
}

// TestWatchFollowsEachSource: a watch of each network source runs when
// due and not before, stores what its source has through the pipeline
// (tagged), and its next run asks only for what is new: arXiv and
// OpenAlex from the day of the newest paper read (that day again, as the
// source may add to it), OpenReview from the position the last run ended.
func TestWatchFollowsEachSource(t *testing.T) {
	for _, tt := range []struct {
		source, target string
		live           func(t *testing.T) *fetchtest.Live
		url            func(c *Config) *string
		// next says whether a request is one the second run should make.
		next func(q map[string][]string) bool
		// read is what the second run reads of the five and three papers.
		read int
	}{
		{"arxiv", "cat:cs.LG",
			func(t *testing.T) *fetchtest.Live { return fetchtest.ArXivLive(t, "cat:cs.LG", 200) },
			func(c *Config) *string { return &c.ArxivURL },
			func(q map[string][]string) bool {
				return q["search_query"][0] == "(cat:cs.LG) AND submittedDate:[202601050000 TO 999912312359]" // Day(4), the newest read
			}, 4},
		{"openalex", "concepts.id:C1",
			func(t *testing.T) *fetchtest.Live {
				return fetchtest.OpenAlexLive(t, "concepts.id:C1", "me@example.org", 200)
			},
			func(c *Config) *string { return &c.OpenAlexURL },
			func(q map[string][]string) bool {
				return q["filter"][0] == "concepts.id:C1,from_publication_date:2026-01-05"
			}, 4},
		{"openreview", "ICLR.cc/2027/Conference",
			func(t *testing.T) *fetchtest.Live {
				return fetchtest.OpenReviewLive(t, "ICLR.cc/2027/Conference", 1000)
			},
			func(c *Config) *string { return &c.OpenReviewURL },
			func(q map[string][]string) bool { return q["offset"][0] == "5" }, 3},
	} {
		t.Run(tt.source, func(t *testing.T) {
			ctx := context.Background()
			env := newWatchEnv(t)
			up := tt.live(t)
			*tt.url(&env.cfg) = up.URL
			up.Publish(5)
			w := env.open(t)
			req := WatchRequest{Source: tt.source, Target: tt.target, Every: ptr("1d"), Tags: []string{"Followed"}}
			if tt.source != "openreview" {
				req.Since = ptr("2025-12-01")
			}
			watch, err := w.Add(ctx, req)
			if err != nil || watch.Every != "1d" || watch.Max != DefaultPapers || !watch.NextRun.Equal(env.clock.now()) {
				t.Fatalf("add: %+v %v", watch, err)
			}
			runDue(t, w)
			first := get(t, w, watch.ID)
			if first.Runs != 1 || first.LastAdded != 5 || first.LastError != "" || first.Running || env.tagged(t, "followed") != 5 ||
				!first.NextRun.Equal(env.clock.now().Add(24*time.Hour)) {
				t.Fatalf("after the first run: %+v, %d papers tagged", first, env.tagged(t, "followed"))
			}
			up.Asked()
			env.clock.advance(23 * time.Hour)
			runDue(t, w)
			if got := get(t, w, watch.ID); got.Runs != 1 || len(up.Asked()) != 0 {
				t.Fatalf("ran before its period: %+v", got)
			}
			up.Publish(3)
			env.clock.advance(time.Hour)
			runDue(t, w)
			second := get(t, w, watch.ID)
			asked := up.Asked()
			if second.Runs != 2 || second.LastAdded != 3 || second.LastRead != tt.read || env.tagged(t, "followed") != 8 {
				t.Errorf("after the second run: %+v, %d papers tagged", second, env.tagged(t, "followed"))
			}
			if len(asked) != 1 || !tt.next(asked[0]) {
				t.Errorf("the second run asked %v", asked)
			}
		})
	}
}

// TestWatchResumesAfterRestart: a run stopped midway (the server shutting
// down) leaves its watch due; the watches opened again (a restarted
// server) run it on from the batch it stored last, not from the start,
// and it ends having stored everything once.
func TestWatchResumesAfterRestart(t *testing.T) {
	ctx := context.Background()
	env := newWatchEnv(t)
	up := fetchtest.OpenReviewLive(t, "NeurIPS.cc/2026/Conference", 1000)
	env.cfg.OpenReviewURL = up.URL
	up.Publish(2500)
	first := env.open(t)
	watch, err := first.Add(ctx, WatchRequest{Source: "openreview", Target: "NeurIPS.cc/2026/Conference"})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	up.Before(func(r *http.Request) {
		if r.URL.Query().Get("offset") == "2000" {
			stop() // the server shuts down while the third page is asked for
		}
	})
	if err := first.StartDue(runCtx); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	up.Before(nil)
	stopped := get(t, first, watch.ID)
	stored := env.stored(t)
	if stopped.Runs != 0 || stopped.Running || stored == 0 || stored == 2500 {
		t.Fatalf("after the stopped run: %+v, %d stored", stopped, stored)
	}
	first.Close()
	up.Asked()
	restarted := env.open(t)
	runDue(t, restarted)
	asked := up.Asked()
	done := get(t, restarted, watch.ID)
	if done.Runs != 1 || done.LastError != "" || env.stored(t) != 2500 || done.LastAdded != 2500-stored || done.Position != "2500" {
		t.Fatalf("after the restarted run: %+v, %d stored", done, env.stored(t))
	}
	if len(asked) == 0 || asked[0].Get("offset") == "0" {
		t.Errorf("the restarted run asked %v; want it to go on after the %d stored", asked, stored)
	}
}

// TestWatchNeverRunsTwice: while one process runs a watch, neither it nor
// another process on the same data folder starts it again, and its
// status says it is running; once the run ends it is free again.
func TestWatchNeverRunsTwice(t *testing.T) {
	ctx := context.Background()
	env := newWatchEnv(t)
	up := fetchtest.ArXivLive(t, "cat:cs.CL", 200)
	env.cfg.ArxivURL = up.URL
	up.Publish(3)
	a, b := env.open(t), env.open(t)
	watch, err := a.Add(ctx, WatchRequest{Source: "arxiv", Target: "cat:cs.CL", Since: ptr("2025-12-01")})
	if err != nil {
		t.Fatal(err)
	}
	asked, release := make(chan struct{}, 10), make(chan struct{})
	up.Before(func(*http.Request) {
		asked <- struct{}{}
		<-release
	})
	if err := a.StartDue(ctx); err != nil {
		t.Fatal(err)
	}
	<-asked // a's run is waiting for its answer
	for _, w := range []*Watches{a, b} {
		if err := w.StartDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := get(t, b, watch.ID); !got.Running {
		t.Errorf("while a runs it: %+v", got)
	}
	close(release)
	a.Wait()
	b.Wait()
	if got := get(t, b, watch.ID); got.Runs != 1 || got.Running || up.Requests() != 1 || len(asked) != 0 {
		t.Errorf("after the run: %+v, %d requests", got, up.Requests())
	}
}

// TestWatchRunsOnItsInterval: Run, left running, starts a watch when it
// is made and again each time its period has passed.
func TestWatchRunsOnItsInterval(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	env := newWatchEnv(t)
	up := fetchtest.OpenAlexLive(t, "topics.id:T1", "me@example.org", 200)
	env.cfg.OpenAlexURL = up.URL
	up.Publish(2)
	w := env.open(t)
	w.Tick = 5 * time.Millisecond
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	watch, err := w.Add(ctx, WatchRequest{Source: "openalex", Target: "topics.id:T1", Every: ptr("6h"), Since: ptr("2025-12-01")})
	if err != nil {
		t.Fatal(err)
	}
	waitRuns := func(n int) Watch {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			got := get(t, w, watch.ID)
			if got.Runs >= n && !got.Running || time.Now().After(deadline) {
				return got
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if got := waitRuns(1); got.Runs != 1 || got.LastAdded != 2 {
		t.Fatalf("the first run: %+v", got)
	}
	up.Publish(1)
	env.clock.advance(6 * time.Hour)
	if got := waitRuns(2); got.Runs != 2 || got.LastAdded != 1 {
		t.Fatalf("the run after 6 hours: %+v", got)
	}
}

// TestWatchFailureAndRemoval: a failed run says why in words that name no
// internals and is tried again within 15 minutes, keeping where the next
// run goes on from; a removed watch is gone; bad requests name their
// field.
func TestWatchFailureAndRemoval(t *testing.T) {
	ctx := context.Background()
	env := newWatchEnv(t)
	up := fetchtest.OpenAlexLive(t, "topics.id:T1", "someone-else@example.org", 200) // refuses our mailto
	env.cfg.OpenAlexURL = up.URL
	w := env.open(t)
	watch, err := w.Add(ctx, WatchRequest{Source: "openalex", Target: "topics.id:T1", Every: ptr("1w"), Since: ptr("2026-11-01")})
	if err != nil {
		t.Fatal(err)
	}
	runDue(t, w)
	failed := get(t, w, watch.ID)
	if failed.Runs != 1 || failed.LastError == "" || failed.Since != "2026-11-01" || !failed.NextRun.Equal(env.clock.now().Add(15*time.Minute)) {
		t.Errorf("after a failed run: %+v", failed)
	}
	if err := w.Remove(ctx, watch.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Get(ctx, watch.ID); !errors.Is(err, ErrNoWatch) {
		t.Errorf("a removed watch: %v", err)
	}
	if err := w.Remove(ctx, watch.ID); !errors.Is(err, ErrNoWatch) {
		t.Errorf("removed twice: %v", err)
	}
	zero := 0
	for _, tt := range []struct {
		req   WatchRequest
		field string
	}{
		{WatchRequest{Source: "bibtex", Target: "x"}, "source"},
		{WatchRequest{Source: "arxiv-snapshot", Target: "x"}, "source"},
		{WatchRequest{Source: "arxiv", Target: " "}, "target"},
		{WatchRequest{Source: "arxiv", Target: "cat:cs.LG\x1b]0;PWNED\x07\x1b[2J\r\nfake line"}, "target"},
		{WatchRequest{Source: "openreview", Target: "x\u202e"}, "target"},
		{WatchRequest{Source: "arxiv", Target: "x", Every: ptr("30m")}, "every"},
		{WatchRequest{Source: "arxiv", Target: "x", Max: &zero}, "max"},
		{WatchRequest{Source: "arxiv", Target: "x", Tags: []string{"a b"}}, "tags"},
		{WatchRequest{Source: "arxiv", Target: "x", Since: ptr("2027-02-30")}, "since"},
		{WatchRequest{Source: "arxiv", Target: "x", Since: ptr("yesterday")}, "since"},
		{WatchRequest{Source: "openreview", Target: "x", Since: ptr("2026-01-01")}, "since"},
	} {
		var fe *papersearch.FieldError
		if _, err := w.Add(ctx, tt.req); !errors.As(err, &fe) || fe.Field != tt.field || !errors.Is(err, ErrBadRequest) {
			t.Errorf("%+v: %v; want an error naming %s", tt.req, err, tt.field)
		}
	}
}

func ptr[T any](v T) *T { return &v }
