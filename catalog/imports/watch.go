package imports

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/storage"
)

// Watches: network sources the server imports from by itself, each on
// its period, through the one pipeline (Opener, then Runner: Config.Open
// and catalog.Catalog.Import). A run goes on from where the last ended: a
// source read by date (arXiv, OpenAlex) is asked only for what it dates
// on or after the day of the newest paper read before; one read in order
// (OpenReview) from the position the last run ended at. A run stopped
// midway (the server shutting down) resumes from its checkpoint. The
// watches and their state are one SQLite file in the data folder, shared
// by every process on it: a lease there keeps a watch from running twice
// at once, here or in another process.

// errControlTarget is why an import's or a watch's target holding a
// character RefusedInTarget refuses is refused.
const errControlTarget = "must not hold control characters (a terminal escape, a tab or line break, a bidirectional override)"

// RefusedInTarget reports whether an import's or a watch's target may not
// hold r: a C0 or C1 control, tab and line breaks included, or a
// bidirectional embedding, override or isolate (papersearch.Control). No
// query, venue or filter holds one, and a terminal listing the watches
// would act on it. The OpenAPI document's targets say the same.
func RefusedInTarget(r rune) bool { return unicode.IsControl(r) || papersearch.Control(r) }

// Limits and defaults of watches.
const (
	// DefaultWatchEvery is a watch's period when its request gives none.
	DefaultWatchEvery = "1d"
	// DefaultWatchSince is how far back a watch's first run reads by
	// default, for a source read by date.
	DefaultWatchSince = 7 * 24 * time.Hour
	// MaxWatchTarget bounds a watch's target, in characters.
	MaxWatchTarget = 2000
	// MaxWatches bounds the watches kept.
	MaxWatches = 200
	// MaxWatchRuns is how many watch runs a process runs at once; the
	// other due watches wait for a slot and run in their turn. Two, as
	// imports (MaxRunning): a run may read a page of up to
	// fetch.MaxPageBytes, which took a process 163 MB above its rest
	// (TestGzipBomb), and two runs beside two imports stay within the 1
	// GiB deploy/k8s gives the server; arXiv's runs wait on its one
	// client's request spacing anyway.
	MaxWatchRuns = 2
	// retryFailed is how soon a failed run is tried again, at most.
	retryFailed = 15 * time.Minute
)

// Errors of the watches.
var (
	ErrNoWatch        = errors.New("no watch has the id")
	ErrWatchRunning   = errors.New("the watch is running (here or in another process on the same data folder)")
	ErrTooManyWatches = fmt.Errorf("%d watches are kept, the most there may be; remove one first", MaxWatches)
)

// Watches keeps and runs the watches of a data folder. Make it with
// OpenWatches; Run runs the due watches until its context ends.
type Watches struct {
	store watchKeeper
	open  Opener
	run   Runner
	log   *slog.Logger
	// owner names this process in the leases it takes.
	owner string
	// Now is the clock (time.Now; a test's to move).
	Now func() time.Time
	// Tick is how often Run looks for due watches (30 s when not above 0).
	Tick time.Duration
	// Lease is how long a run holds its watch before renewing (default
	// 2 minutes): a process that dies holding one frees it after this.
	Lease time.Duration

	mu      sync.Mutex
	running map[string]context.CancelFunc // this process's runs, by watch id
	slots   chan struct{}                 // a token per run under way, MaxWatchRuns at most
	wg      sync.WaitGroup
}

// watchKeeper keeps the watches, their schedules and leases: a SQLite
// file (watchStore) or a store's records (recordWatches).
type watchKeeper interface {
	close() error
	add(ctx context.Context, w watchRow) error
	list(ctx context.Context) ([]watchRow, error)
	get(ctx context.Context, id string) (watchRow, error)
	remove(ctx context.Context, id string) error
	due(ctx context.Context, now time.Time) ([]string, error)
	claim(ctx context.Context, id, owner string, now time.Time, ttl time.Duration) (bool, error)
	renew(ctx context.Context, id, owner string, until time.Time) (bool, error)
	noteNewest(ctx context.Context, id, owner, newest string) error
	finish(ctx context.Context, id, owner string, end runEnd, stopped bool) error
	runNow(ctx context.Context, id string, now time.Time) error
}

// OpenWatches opens the watches kept in the SQLite file at path, to be
// run with open and run.
func OpenWatches(ctx context.Context, path string, run Runner, open Opener, log *slog.Logger) (*Watches, error) {
	store, err := openWatchStore(ctx, path)
	if err != nil {
		return nil, err
	}
	return newWatches(store, run, open, log), nil
}

// WatchesIn opens the watches kept as records of a store (Qdrant's), to
// be run with open and run: every instance on the store lists, runs and
// deletes the same ones, each due watch run by one of them.
func WatchesIn(records storage.Records, run Runner, open Opener, log *slog.Logger) *Watches {
	return newWatches(&recordWatches{records: records, confirm: confirmLease}, run, open, log)
}

func newWatches(store watchKeeper, run Runner, open Opener, log *slog.Logger) *Watches {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var id [8]byte
	rand.Read(id[:])
	return &Watches{store: store, open: open, run: run, log: log, owner: hex.EncodeToString(id[:]), Now: time.Now,
		Tick: 30 * time.Second, Lease: 2 * time.Minute, running: map[string]context.CancelFunc{}, slots: make(chan struct{}, MaxWatchRuns)}
}

// Close stops this process's runs (each keeps what it stored; the watch
// stays due and resumes from its checkpoint), waits for them, and closes
// the file.
func (w *Watches) Close() error {
	w.mu.Lock()
	for _, cancel := range w.running {
		cancel()
	}
	w.mu.Unlock()
	w.wg.Wait()
	return w.store.close()
}

// Add checks a watch request and keeps the watch, due at once. Its
// errors: a *papersearch.FieldError wrapping ErrBadRequest naming the
// field at fault, or ErrTooManyWatches.
func (w *Watches) Add(ctx context.Context, req WatchRequest) (Watch, error) {
	row, err := w.watchOf(req)
	if err != nil {
		return Watch{}, err
	}
	kept, err := w.store.list(ctx)
	if err != nil {
		return Watch{}, err
	}
	if len(kept) >= MaxWatches {
		return Watch{}, ErrTooManyWatches
	}
	if err := w.store.add(ctx, row); err != nil {
		return Watch{}, err
	}
	return w.Get(ctx, row.ID)
}

// watchOf checks a request and makes the watch it asks for.
func (w *Watches) watchOf(req WatchRequest) (watchRow, error) {
	k, ok := lookup(req.Source)
	if !ok || k.file {
		return watchRow{}, badRequest("source", "must be a network source: "+strings.Join(WatchSources(), ", "))
	}
	if strings.TrimSpace(req.Target) == "" || utf8.RuneCountInString(req.Target) > MaxWatchTarget {
		return watchRow{}, badRequest("target", fmt.Sprintf("must say what the source is asked for, in at most %d characters", MaxWatchTarget))
	}
	if strings.ContainsFunc(req.Target, RefusedInTarget) {
		return watchRow{}, badRequest("target", errControlTarget)
	}
	every := DefaultWatchEvery
	if req.Every != nil {
		every = *req.Every
	}
	period, err := papersearch.ParsePeriod(every)
	if err != nil {
		return watchRow{}, badRequest("every", err.Error())
	}
	tags, ok := papersearch.CleanTags(req.Tags)
	if !ok {
		return watchRow{}, badRequest("tags", "must be valid: "+papersearch.ErrBadTag.Error())
	}
	limit := DefaultPapers
	if req.Max != nil {
		if limit = *req.Max; limit < 1 || limit > MaxPapers {
			return watchRow{}, badRequest("max", fmt.Sprintf("must be between 1 and %d", MaxPapers))
		}
	}
	now := w.Now().UTC().Truncate(time.Millisecond)
	since := ""
	if k.since != nil {
		day := now.Add(-DefaultWatchSince).Format(time.DateOnly)
		if req.Since != nil {
			day = *req.Since
		}
		first, _, ok := papersearch.ParseDate(day)
		if !ok {
			return watchRow{}, badRequest("since", "must be a day (YYYY-MM-DD) or a month (YYYY-MM, its first day)")
		}
		since = first.Format(time.DateOnly)
	} else if req.Since != nil {
		return watchRow{}, badRequest("since", "is for the sources read by date: "+strings.Join(dated(), ", "))
	}
	if tags == nil {
		tags = []string{}
	}
	var id [8]byte
	rand.Read(id[:])
	return watchRow{Watch: Watch{ID: "w_" + hex.EncodeToString(id[:]), Source: req.Source, Target: req.Target, Every: every,
		Tags: tags, Max: limit, Created: now, Since: since, NextRun: now}, every: period}, nil
}

// WatchSources names the sources a watch can follow: the network ones.
func WatchSources() []string { return NetworkSources() }

// dated names the sources a watch reads by date.
func dated() []string { return sources(func(k kind) bool { return k.since != nil }) }

// InOrder names the network sources a watch reads in order, from where its
// last run ended, rather than by date (it takes no since).
func InOrder() []string { return sources(func(k kind) bool { return !k.file && k.since == nil }) }

// List returns the watches, oldest first, each as it stands.
func (w *Watches) List(ctx context.Context) ([]Watch, error) {
	rows, err := w.store.list(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Watch, len(rows))
	for i, r := range rows {
		out[i] = w.status(r)
	}
	return out, nil
}

// Get returns the watch of that id as it stands, or ErrNoWatch.
func (w *Watches) Get(ctx context.Context, id string) (Watch, error) {
	r, err := w.store.get(ctx, id)
	if err != nil {
		return Watch{}, err
	}
	return w.status(r), nil
}

// status is a stored watch as reported.
func (w *Watches) status(r watchRow) Watch {
	out := r.Watch
	out.Running = r.leaseUntil.After(w.Now())
	return out
}

// Remove forgets the watch of that id, stopping its run in this process
// (what the run stored stays), or answers ErrNoWatch.
func (w *Watches) Remove(ctx context.Context, id string) error {
	if err := w.store.remove(ctx, id); err != nil {
		return err
	}
	w.mu.Lock()
	if cancel := w.running[id]; cancel != nil {
		cancel()
	}
	w.mu.Unlock()
	return nil
}

// RunNow makes the watch of that id due now: Run starts it at its next
// look, in its turn for one of the MaxWatchRuns slots, unless it is
// running.
func (w *Watches) RunNow(ctx context.Context, id string) (Watch, error) {
	if err := w.store.runNow(ctx, id, w.Now()); err != nil {
		return Watch{}, err
	}
	return w.Get(ctx, id)
}
