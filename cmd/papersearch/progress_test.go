package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/papersearch/papersearch/catalog"
)

// TestProgressLine: a line says records done of the estimated total, what
// was stored, embedded and rejected, the rate and the time left.
func TestProgressLine(t *testing.T) {
	p := catalog.ImportProgress{Read: 600, Rejected: 2, Stored: 510, New: 500, Embedded: 520, Done: 530, Elapsed: 53 * time.Second}
	got := progressLine("c.jsonl", p, 2000)
	want := "c.jsonl: 530 of about 2000 records (26%); 510 papers stored (500 new), 520 embedded, 2 rejected; 10.0 records/s, about 2m27s left"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := progressLine("q", p, 0); !strings.HasPrefix(got, "q: 530 records; 510 papers stored") || strings.Contains(got, "left") {
		t.Errorf("without a total: %s", got)
	}
}

// TestFileProgressEstimatesRecords: the total is estimated from the share
// of the file read, and a view off a terminal prints at most a line a
// period.
func TestFileProgressEstimatesRecords(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, bytes.Repeat([]byte("x"), 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	r, view := fileProgress(&out, "f", f, time.Hour)
	if _, err := r.Read(make([]byte, 250)); err != nil {
		t.Fatal(err)
	}
	if got := view.total(10); got != 40 {
		t.Errorf("10 records in a quarter of the file: total %d, want 40", got)
	}
	view.report(catalog.ImportProgress{Read: 10, Done: 5, Elapsed: time.Second})
	view.report(catalog.ImportProgress{Read: 10, Done: 8, Elapsed: 2 * time.Second})
	view.finish()
	if got := out.String(); got != "f: 5 of about 40 records (12%); 0 papers stored (0 new), 0 embedded, 0 rejected; 5.0 records/s, about 7s left\n" {
		t.Errorf("printed %q", got)
	}
}
