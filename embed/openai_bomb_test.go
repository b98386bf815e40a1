package embed_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/testenv"
)

// TestOpenAIGzipBomb: an endpoint whose /v1/embeddings answers a 600 KB
// gzip response inflating to 600 MiB (white space inside the vector) is
// refused once, not retried, with an error naming the endpoint and the
// limit, and the client's process stays within 300 MB of its memory at
// rest (the bound is wider under the race detector). The client runs in
// a child process of the test binary, whose memory is its own.
func TestOpenAIGzipBomb(t *testing.T) {
	if url, ok := testenv.Child(); ok {
		embedBomb(t, url)
		return
	}
	const inflated = 600 << 20
	body := testenv.GzipBomb(t, `{"object":"list","model":"m","data":[{"object":"embedding","index":0,"embedding":[0.5,`, ' ', inflated, `0.5]}]}`)
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Path != "/v1/embeddings" || !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			http.Error(w, "not an embeddings request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(body)
	}))
	defer srv.Close()
	start := time.Now()
	mem, _ := testenv.RunChild(t, srv.URL)
	t.Logf("a %d-byte gzip response inflating to %d MiB: the child at rest %d MB, at its peak %d MB, in %s",
		len(body), inflated>>20, mem.Resting>>20, mem.Peak>>20, time.Since(start).Round(time.Millisecond))
	if requests.Load() != 1 {
		t.Errorf("%d requests; want 1, not retried", requests.Load())
	}
	if grew, bound := mem.Peak-mem.Resting, testenv.MemoryBound(300<<20); grew > bound {
		t.Errorf("the child grew by %d MB reading the response; want under %d", grew>>20, bound>>20)
	}
}

// embedBomb, in the child, embeds a text through the endpoint at url.
func embedBomb(t *testing.T, url string) {
	c, err := embed.NewOpenAI(context.Background(), embed.OpenAIConfig{BaseURL: url + "/v1", Model: "m", Dimensions: 2,
		MaxRetryTime: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	testenv.NoteResting(t)
	_, err = c.Embed(context.Background(), []string{"a text"})
	limit := fmt.Sprintf("%d MiB", embed.MaxResponseBytes>>20)
	if !errors.Is(err, embed.ErrTooLarge) || !errors.Is(err, embed.ErrEndpoint) || errors.Is(err, embed.ErrUnavailable) ||
		!strings.Contains(err.Error(), url) || !strings.Contains(err.Error(), limit) {
		t.Errorf("err = %v; want ErrTooLarge naming %s and the %s limit", err, url, limit)
	}
}
