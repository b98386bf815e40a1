// Package testenv holds what the project's tests share: how a test that
// needs something outside Go (a Qdrant server, Chromium, Jupyter, the
// shared data) says so in one way (it skips with the reason on a
// developer's machine, and fails when PAPERSEARCH_TEST_STRICT is set, as
// .ci/run sets it, so that a missing install step can never pass as a
// green run), a buffer safe to share with a logger, and what a test of a
// hostile upstream needs: its gzip bomb, and a child process whose memory
// at rest and at its peak the test reads.
package testenv

import (
	"bytes"
	"os"
	"sync"
	"testing"
)

// StrictVar names the environment variable that turns skips into failures.
const StrictVar = "PAPERSEARCH_TEST_STRICT"

// Strict reports whether tests must not skip for a missing dependency.
func Strict() bool {
	v := os.Getenv(StrictVar)
	return v != "" && v != "0" && v != "false"
}

// Missing stops t because something it needs is not here: a skip that says
// why, or, under StrictVar, a failure.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if Strict() {
		t.Fatalf("required by "+StrictVar+": "+format, args...)
	}
	t.Skipf(format, args...)
}

// Buffer is a bytes.Buffer that a logger or a child process and a test may
// write and read at once.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
