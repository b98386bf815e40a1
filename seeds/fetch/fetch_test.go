package fetch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRetriesAndSpacing: 503s are retried until the answer comes, and
// requests are never closer together than the client's spacing.
func TestRetriesAndSpacing(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	c := New("Test", 150*time.Millisecond)
	start := time.Now()
	var got string
	err := c.Get(context.Background(), srv.URL, func(r io.Reader) error {
		b, err := io.ReadAll(r)
		got = string(b)
		return err
	})
	if err != nil || got != "ok" || calls.Load() != 3 {
		t.Fatalf("got %q, %v after %d calls", got, err, calls.Load())
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("three requests in %s: closer than the 150 ms spacing", d)
	}
}

// TestGivesUp: a source that keeps failing is given up on within the
// retry budget, with an error naming it and its last answer.
func TestGivesUp(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "maintenance", http.StatusBadGateway)
	}))
	defer srv.Close()
	c := New("Test", 0)
	c.MaxElapsed = time.Second
	err := c.Get(context.Background(), srv.URL, func(io.Reader) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "Test: HTTP 502") || !strings.Contains(err.Error(), "maintenance") {
		t.Errorf("err = %v", err)
	}
	if errors.Is(err, ErrRefused) {
		t.Error("a 502 is not a refusal")
	}
}

// TestRedirectsStayOnTheHost: a redirect within the source's host is
// followed; one to another host (an internal address, say) is refused at
// once, and the other host is never asked.
func TestRedirectsStayOnTheHost(t *testing.T) {
	var internal atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		internal.Add(1)
		io.WriteString(w, "secret")
	}))
	defer other.Close()
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/here", http.StatusFound)
		case "/here":
			io.WriteString(w, "ok")
		default:
			http.Redirect(w, r, other.URL+"/internal/admin", http.StatusFound)
		}
	}))
	defer src.Close()
	c := New("Test", 0)
	var got string
	read := func(r io.Reader) error { b, err := io.ReadAll(r); got = string(b); return err }
	if err := c.Get(context.Background(), src.URL+"/moved", read); err != nil || got != "ok" {
		t.Errorf("a redirect on the host: %q, %v", got, err)
	}
	err := c.Get(context.Background(), src.URL+"/away", read)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "redirect") || internal.Load() != 0 {
		t.Errorf("a redirect to another host: %v; the other host asked %d times", err, internal.Load())
	}
}

// TestNoSuchHostFailsFast: a host that does not resolve is not retried:
// the error comes at once, saying the source cannot be reached.
func TestNoSuchHostFailsFast(t *testing.T) {
	c := New("Test", 0)
	c.MaxElapsed = time.Hour
	// Were it retried, the context's end would be the error.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := c.Get(ctx, "http://no-such-host.invalid/api", func(io.Reader) error { return nil })
	if !errors.Is(err, ErrUnreachable) {
		t.Errorf("err = %v, want ErrUnreachable at once", err)
	}
}
