// Package testenv lets a test that needs something outside Go (a Qdrant
// server, Chromium, Jupyter, the shared data) say so in one way: it skips
// with the reason on a developer's machine, and fails when
// PAPERSEARCH_TEST_STRICT is set, as .ci/run sets it, so that a missing
// install step can never pass as a green run.
package testenv

import (
	"os"
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
