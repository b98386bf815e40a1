package testenv

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// ChildVar names the environment variable that makes a test binary that
// RunChild started a child: it holds the argument the parent passed.
const ChildVar = "PAPERSEARCH_TEST_CHILD"

// Child reports whether this process is a child that RunChild started,
// and the argument it was given.
func Child() (arg string, ok bool) { return os.LookupEnv(ChildVar) }

// Memory is what a child's memory was: resident at rest, as NoteResting
// saw it, and at its peak (Linux's VmHWM), in bytes.
type Memory struct{ Resting, Peak int64 }

// MemoryBound returns the growth a test allows a process: bound for a
// test binary built without the race detector, a few times bound under
// it, whose shadow memory multiplies what a process holds.
func MemoryBound(bound int64) int64 { return bound * raceMemory }

// memoryLine is how a child tells RunChild its memory.
const memoryLine = "testenv-memory"

// NoteResting, in a child, writes its resident memory now (the rest
// before what it measures) to its output, and its peak when t ends, for
// RunChild. It skips t where /proc/self/status cannot say (not Linux).
func NoteResting(t testing.TB) {
	t.Helper()
	rss := procStatus(t, "VmRSS")
	fmt.Printf("%s resting=%d\n", memoryLine, rss)
	t.Cleanup(func() { fmt.Printf("%s peak=%d\n", memoryLine, procStatus(t, "VmHWM")) })
}

// procStatus reads a field of /proc/self/status, in bytes.
func procStatus(t testing.TB, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status to read the memory in: %v", err)
	}
	m := regexp.MustCompile(`(?m)^` + field + `:\s+(\d+) kB$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("/proc/self/status has no %s", field)
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10
}

// RunChild runs the test t again, alone, in a child process of the test
// binary whose ChildVar is arg; it skips t if the child skipped, stops it
// if the child fails or does not call NoteResting, and returns the
// child's memory and output.
func RunChild(t *testing.T, arg string) (Memory, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), exe, "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), ChildVar+"="+arg)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child failed: %v\n%s", err, out)
	}
	var m Memory
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), memoryLine+" resting="); ok {
			m.Resting, _ = strconv.ParseInt(rest, 10, 64)
		} else if rest, ok := strings.CutPrefix(sc.Text(), memoryLine+" peak="); ok {
			m.Peak, _ = strconv.ParseInt(rest, 10, 64)
		}
	}
	if bytes.Contains(out, []byte("--- SKIP: "+t.Name())) {
		t.Skipf("the child skipped:\n%s", out)
	}
	if m.Resting == 0 || m.Peak == 0 {
		t.Fatalf("the child told no memory (NoteResting):\n%s", out)
	}
	return m, string(out)
}

// GzipBomb is a hostile upstream's answer: prefix, n bytes of fill, then
// suffix, gzip-compressed at BestCompression, about n/1000 bytes long (600
// MiB of one byte: 600 KB) and inflating to n. It is gzip members laid end
// to end (RFC 1952 §2.2), which Go's transport inflates as one stream: the
// prefix, a member of 1 MiB of fill repeated, then the rest and the
// suffix; made so, it takes milliseconds where one stream of 600 MiB took
// 1.5 s to compress (45 s under the race detector).
func GzipBomb(t testing.TB, prefix string, fill byte, n int64, suffix string) []byte {
	t.Helper()
	const chunk = 1 << 20
	member := func(parts ...[]byte) []byte {
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range parts {
			zw.Write(p)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	full := member(bytes.Repeat([]byte{fill}, chunk))
	out := member([]byte(prefix))
	for range n / chunk {
		out = append(out, full...)
	}
	return append(out, member(bytes.Repeat([]byte{fill}, int(n%chunk)), []byte(suffix))...)
}
