package limitbody

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/papersearch/papersearch/internal/testenv"
)

// TestTransport: answers up to the limit are read whole; one byte more,
// counted after the transport inflated a gzip answer, or a Content-Length
// over the limit, ends the body in ErrTooLarge naming the limit.
func TestTransport(t *testing.T) {
	const limit = 1 << 20
	bomb := testenv.GzipBomb(t, "", 'a', limit+1, "")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		switch r.URL.Path {
		case "/plain":
			w.Write(bytes.Repeat([]byte{'a'}, n))
		case "/gzip":
			if r.Header.Get("Accept-Encoding") != "gzip" {
				t.Errorf("Accept-Encoding %q: the transport did not ask for gzip", r.Header.Get("Accept-Encoding"))
			}
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bomb)
		case "/declared":
			w.Header().Set("Content-Length", strconv.Itoa(limit+1))
			w.(http.Flusher).Flush() // headers out; the body never comes
		}
	}))
	defer srv.Close()
	if len(bomb) >= limit/100 {
		t.Fatalf("the bomb is %d bytes compressed", len(bomb))
	}
	c := &http.Client{Transport: Transport{Limit: limit}}
	read := func(path string) (int, error) {
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		return int(n), err
	}
	if n, err := read("/plain?n=" + strconv.Itoa(limit)); n != limit || err != nil {
		t.Errorf("an answer of the limit: %d bytes, %v", n, err)
	}
	for _, tc := range []struct {
		path string
		read int
	}{
		{"/plain?n=" + strconv.Itoa(limit+1), limit},
		{"/gzip", limit},
		{"/declared", 0},
	} {
		n, err := read(tc.path)
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "1 MiB") || n != tc.read {
			t.Errorf("%s: read %d bytes, %v; want %d and ErrTooLarge naming 1 MiB", tc.path, n, err, tc.read)
		}
	}
}
