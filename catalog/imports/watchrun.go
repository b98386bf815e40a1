package imports

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
)

// Running watches: the server's loop that starts those due, one run at a
// time each under a lease, and a run's import from where the last ended.

// Run starts the due watches every Tick until ctx ends, then stops its
// runs and waits for them.
func (w *Watches) Run(ctx context.Context) {
	tick := w.Tick
	if tick <= 0 {
		tick = 30 * time.Second
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		if err := w.StartDue(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("watches: could not look for due watches", "error", err)
		}
		select {
		case <-ctx.Done():
			w.wg.Wait()
			return
		case <-t.C:
		}
	}
}

// StartDue starts, each in the background, the watches due now that no
// process runs, and returns once it has started the last: with
// MaxWatchRuns under way, it waits for one to end before it starts the
// next. The runs end when ctx does; Wait waits for them.
func (w *Watches) StartDue(ctx context.Context) error {
	ids, err := w.store.due(ctx, w.Now())
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := w.start(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// start waits for a run slot, then claims the watch of that id if it is
// due and no process runs it, and runs it in the background; it reports
// whether it did. The slot is taken before the claim, so that a watch
// waiting for one holds no lease.
func (w *Watches) start(ctx context.Context, id string) (bool, error) {
	select {
	case w.slots <- struct{}{}:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	// A claim under way is waited for as a run is (Wait, Close): a
	// process stopping does not exit in the middle of one.
	w.wg.Add(1)
	now := w.Now()
	ok, err := w.store.claim(ctx, id, w.owner, now, w.Lease)
	if err != nil || !ok {
		<-w.slots
		w.wg.Done()
		return false, err // not ok: another process took it first
	}
	runCtx, cancel := context.WithCancel(ctx)
	w.mu.Lock()
	w.running[id] = cancel
	w.mu.Unlock()
	go func() {
		defer w.wg.Done()
		defer func() { <-w.slots }()
		defer cancel()
		w.runWatch(runCtx, id, now.Add(w.Lease))
		w.mu.Lock()
		delete(w.running, id)
		w.mu.Unlock()
	}()
	return true, nil
}

// RunHere runs the watch of that id now, in this process (when one of its
// MaxWatchRuns slots is free), and returns it as the run left it;
// ErrWatchRunning if a process runs it already.
func (w *Watches) RunHere(ctx context.Context, id string) (Watch, error) {
	if err := w.store.runNow(ctx, id, w.Now()); err != nil {
		return Watch{}, err
	}
	started, err := w.start(ctx, id)
	if err != nil {
		return Watch{}, err
	}
	if !started {
		return Watch{}, fmt.Errorf("%w: %s", ErrWatchRunning, id)
	}
	w.Wait()
	return w.Get(context.WithoutCancel(ctx), id)
}

// Wait waits for this process's runs to end.
func (w *Watches) Wait() { w.wg.Wait() }

// runWatch runs a watch this process has claimed (its lease held until
// held), renewing its lease until the run ends, and records how it went.
func (w *Watches) runWatch(ctx context.Context, id string, held time.Time) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go w.keepLease(ctx, cancel, id, held)
	row, err := w.store.get(ctx, id)
	if err != nil {
		w.log.Warn("watch: could not read it", "watch", id, "error", err)
		return
	}
	start := w.Now()
	log := w.log.With("watch", id, "source", row.Source, "target", row.Target)
	end, err := w.importOnce(ctx, row, log)
	end.Finished = w.Now()
	stopped := err != nil && ctx.Err() != nil
	switch {
	case stopped:
		log.Info("watch run stopped; its next run resumes after what it stored", "read", end.Read, "added", end.Added)
	case err != nil:
		end.Err = publicError(err)
		end.NextRun = start.Add(min(row.every, retryFailed))
		log.Warn("watch run failed", "error", err, "read", end.Read, "added", end.Added, "retry", end.NextRun)
	default:
		end.Completed, end.NextRun = true, start.Add(row.every)
		log.Info("watch run done", "read", end.Read, "added", end.Added, "since", end.Since, "position", end.Position,
			"took", end.Finished.Sub(start).Round(time.Millisecond), "next", end.NextRun)
	}
	// The run's own context may have ended: record with a fresh one.
	rec, done := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer done()
	if err := w.store.finish(rec, id, w.owner, end, stopped); err != nil {
		log.Warn("watch: could not record its run", "error", err)
	}
}

// keepLease renews the lease of a running watch, held until held, every
// quarter of Lease. The run is cancelled if the watch is gone or another
// process holds it, and also when a renewal fails and the lease would run
// out before the next one could end: each renewal is given up after a
// quarter of Lease, so a store that errs or stalls gets one more try and
// then stops the run before its lease lapses, not after another process
// has claimed the watch.
func (w *Watches) keepLease(ctx context.Context, cancel context.CancelFunc, id string, held time.Time) {
	every := w.Lease / 4
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			until := w.Now().Add(w.Lease)
			rctx, stop := context.WithTimeout(ctx, every)
			ok, err := w.store.renew(rctx, id, w.owner, until)
			stop()
			switch {
			case err == nil && ok:
				held = until
			case err == nil:
				w.log.Warn("watch: its lease is lost (removed, or taken by another process); stopping the run", "watch", id)
				cancel()
				return
			case ctx.Err() != nil:
				return
			case w.Now().Add(2 * every).After(held):
				w.log.Warn("watch: its lease could not be renewed and runs out before the next try; stopping the run", "watch", id, "error", err)
				cancel()
				return
			default:
				w.log.Warn("watch: its lease could not be renewed; trying again", "watch", id, "error", err, "held_until", held)
			}
		}
	}
}

// importOnce runs one import of a watch through the pipeline and says
// where the next run goes on from.
func (w *Watches) importOnce(ctx context.Context, row watchRow, log *slog.Logger) (runEnd, error) {
	k, _ := lookup(row.Source)
	req := Request{Kind: row.Source, Target: row.Target, Max: row.Max, Tags: row.Tags, Of: row.ID}
	if k.since != nil {
		req.Target = k.since(row.Target, row.Since)
	}
	opened, err := w.open(ctx, req)
	if err != nil {
		return runEnd{Since: row.Since, Position: row.Position}, err
	}
	newest := row.runNewest
	if opened.ResumedAt == "" {
		newest = "" // a fresh run: what an interrupted one read is stored, and its dates are past the since it started from
		if k.since == nil && row.Position != "" {
			if err := seek(opened.Source, row.Position); err != nil {
				return runEnd{Since: row.Since, Position: row.Position}, err
			}
		}
		if err := w.store.noteNewest(ctx, row.ID, w.owner, ""); err != nil {
			return runEnd{}, err
		}
	}
	src := &watched{Source: opened.Source, newest: newest, note: func(ctx context.Context, newest string) error {
		return w.store.noteNewest(ctx, row.ID, w.owner, newest)
	}}
	log.Info("watch run", "asks", req.Target, "resumed_at", opened.ResumedAt, "position", row.Position)
	sum, err := w.run.Import(ctx, src, catalog.ImportOptions{Tags: opened.Tags})
	end := runEnd{Read: sum.Read, Added: sum.New, Since: row.Since, Position: row.Position}
	if k.since != nil && src.newest > end.Since {
		end.Since = src.newest
	}
	if p, ok := opened.Source.(positioned); ok && k.since == nil {
		end.Position = p.Position()
	}
	return end, err
}

// seek moves a source that can say where it stands to pos.
func seek(src catalog.Source, pos string) error {
	s, ok := src.(positioned)
	if !ok {
		return fmt.Errorf("the source cannot go on from %q", pos)
	}
	return s.Seek(pos)
}

// watched is a watch's source as its run reads it: it keeps the newest
// day of the papers read (recording it at each checkpoint, so that a run
// resumed after an interruption knows it) and passes checkpoints on.
type watched struct {
	catalog.Source
	newest string
	note   func(ctx context.Context, newest string) error
}

func (s *watched) Next() (papersearch.Paper, error) {
	p, err := s.Source.Next()
	if err == nil {
		if first, _, ok := papersearch.ParseDate(p.Date); ok {
			if day := first.Format(time.DateOnly); day > s.newest {
				s.newest = day
			}
		}
	}
	return p, err
}

// Checkpoint records the newest day read, then the source's position.
func (s *watched) Checkpoint(ctx context.Context, done bool) error {
	if err := s.note(ctx, s.newest); err != nil {
		return err
	}
	if c, ok := s.Source.(catalog.Checkpointer); ok {
		return c.Checkpoint(ctx, done)
	}
	return nil
}
