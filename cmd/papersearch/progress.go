package main

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/papersearch/papersearch/catalog"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressView shows an import's progress by the records it is through
// with (embedded and stored, or rejected), with their rate and the time
// left: on a terminal as a bar, else as a line at most every period.
type progressView struct {
	w      io.Writer
	name   string
	period time.Duration
	// total estimates how many records the source holds; 0 when it cannot
	// say.
	total func(read int) int
	bar   *progressbar.ProgressBar
	last  time.Time
}

// newProgressView shows progress on w, a bar when w is a terminal.
func newProgressView(w io.Writer, name string, period time.Duration, total func(read int) int) *progressView {
	v := &progressView{w: w, name: name, period: period, total: total}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		v.bar = progressbar.NewOptions(-1, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(name),
			progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("records"),
			progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionSetWidth(30))
	}
	return v
}

// report shows p.
func (v *progressView) report(p catalog.ImportProgress) {
	total := 0
	if v.total != nil {
		total = max(v.total(p.Read), p.Done)
	}
	if v.bar != nil {
		if total > 0 && int64(total) != v.bar.GetMax64() {
			v.bar.ChangeMax(total)
		}
		v.bar.Describe(fmt.Sprintf("%s: %d stored, %d embedded, %d rejected", v.name, p.Stored, p.Embedded, p.Rejected))
		v.bar.Set(p.Done)
		return
	}
	if time.Since(v.last) < v.period {
		return
	}
	v.last = time.Now()
	fmt.Fprintln(v.w, progressLine(v.name, p, total))
}

// finish ends the bar, if there is one.
func (v *progressView) finish() {
	if v.bar != nil {
		v.bar.Finish()
		fmt.Fprintln(v.w)
	}
}

// progressLine says how far an import has come, in one line: records done
// of the total (when known), papers stored, embedded and rejected, the
// rate and the time left.
func progressLine(name string, p catalog.ImportProgress, total int) string {
	rate := 0.0
	if s := p.Elapsed.Seconds(); s > 0 {
		rate = float64(p.Done) / s
	}
	done := fmt.Sprintf("%d records", p.Done)
	left := ""
	if total > 0 {
		done = fmt.Sprintf("%d of about %d records (%d%%)", p.Done, total, 100*p.Done/total)
		if rate > 0 {
			left = fmt.Sprintf(", about %s left", time.Duration(float64(total-p.Done)/rate*float64(time.Second)).Round(time.Second))
		}
	}
	return fmt.Sprintf("%s: %s; %d papers stored (%d new), %d embedded, %d rejected; %.1f records/s%s",
		name, done, p.Stored, p.New, p.Embedded, p.Rejected, rate, left)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	return n, err
}

// fileProgress shows the progress of an import reading f, estimating its
// records from the share of the file's bytes read so far. The reader
// returned is the one to read f through.
func fileProgress(w io.Writer, name string, f *os.File, period time.Duration) (io.Reader, *progressView) {
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || info.Size() == 0 {
		return f, newProgressView(w, name, period, nil)
	}
	c := &countingReader{r: f}
	size := info.Size()
	return c, newProgressView(w, name, period, func(read int) int {
		n := c.n.Load()
		if n == 0 || read == 0 {
			return 0
		}
		return int(float64(read) * float64(size) / float64(n))
	})
}
