package openreview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
	"github.com/papersearch/papersearch/seeds/fetch"
)

const venue = "NeurIPS.cc/2026/Conference"

// fixtureServer answers GET /notes as OpenReview's API v2 does, for a
// venue of n accepted notes: note 7 has no abstract, note 11 is malformed
// (authors not a list); the first request for the second page is answered
// 429 with Retry-After.
func fixtureServer(t *testing.T, n int) (*httptest.Server, *atomic.Int64) {
	var requests atomic.Int64
	var limited atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		q := r.URL.Query()
		if r.URL.Path != "/notes" || q.Get("content.venueid") != venue {
			http.Error(w, `{"name":"NotFoundError","message":"no such venue"}`, http.StatusNotFound)
			return
		}
		offset, _ := strconv.Atoi(q.Get("offset"))
		limit, _ := strconv.Atoi(q.Get("limit"))
		if offset == PageSize && !limited.Swap(true) {
			w.Header().Set("Retry-After", "1")
			http.Error(w, `{"name":"RateLimitError","message":"Too many requests"}`, http.StatusTooManyRequests)
			return
		}
		var notes []json.RawMessage
		for i := offset; i < min(offset+limit, n); i++ {
			content := map[string]any{
				"title":    map[string]any{"value": fmt.Sprintf("Paper %d", i)},
				"abstract": map[string]any{"value": fmt.Sprintf("We study problem %d with method %d.", i, i%13)},
				"authors":  map[string]any{"value": []string{"Ada Lovelace", fmt.Sprintf("Author %d", i)}},
				"venue":    map[string]any{"value": "NeurIPS 2026 poster"},
				"venueid":  map[string]any{"value": venue},
			}
			switch i {
			case 7:
				delete(content, "abstract")
			case 11:
				content["authors"] = map[string]any{"value": "not a list"}
			}
			b, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("note%04d", i), "forum": fmt.Sprintf("note%04d", i),
				"pdate": 1764000000000, "content": content})
			notes = append(notes, b)
		}
		json.NewEncoder(w).Encode(map[string]any{"notes": notes, "count": n})
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

func TestReadVenue(t *testing.T) {
	srv, requests := fixtureServer(t, 2500)
	r := NewReader(context.Background(), fetch.New("OpenReview", 0), srv.URL, venue)
	papers, rejected, err := seeds.Collect(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(papers) != 2498 || len(rejected) != 2 {
		t.Fatalf("%d papers, %d rejected; want 2498 and 2", len(papers), len(rejected))
	}
	if !errors.Is(rejected[0], papersearch.ErrNoAbstract) || rejected[0].Line != 8 || rejected[1].Line != 12 {
		t.Errorf("rejected %v", rejected)
	}
	p := papers[0]
	if p.ID != "openreview:note0000" || p.Venue != "NeurIPS" || p.Year != 2026 || p.URL != "https://openreview.net/forum?id=note0000" ||
		strings.Join(p.Authors, "|") != "Ada Lovelace|Author 0" || p.Title != "Paper 0" {
		t.Errorf("paper 0: %+v", p)
	}
	// Three pages and the one answered 429.
	if n := requests.Load(); n != 4 {
		t.Errorf("%d requests, want 4", n)
	}
	if tag := DefaultTag(venue); tag != "neurips-2026" {
		t.Errorf("default tag %q", tag)
	}
}

// TestRefused: a venue the API does not know is an error naming
// OpenReview and the status, without retries.
func TestRefused(t *testing.T) {
	srv, requests := fixtureServer(t, 10)
	r := NewReader(context.Background(), fetch.New("OpenReview", 0), srv.URL, "ICLR.cc/2099/Conference")
	_, err := r.Next()
	if !errors.Is(err, fetch.ErrRefused) || !strings.Contains(err.Error(), "OpenReview") || !strings.Contains(err.Error(), "404") {
		t.Errorf("err = %v", err)
	}
	if requests.Load() != 1 {
		t.Errorf("%d requests for a refused one, want 1", requests.Load())
	}
}

// TestResume: a reader moved to where another stopped asks only for the
// notes after it, and gives exactly the rest.
func TestResume(t *testing.T) {
	srv, requests := fixtureServer(t, 2500)
	first := NewReader(context.Background(), fetch.New("OpenReview", 0), srv.URL, venue)
	for range 1500 {
		if _, err := first.Next(); err != nil && !errors.As(err, new(*seeds.LineError)) {
			t.Fatal(err)
		}
	}
	asked := requests.Load()
	rest := NewReader(context.Background(), fetch.New("OpenReview", 0), srv.URL, venue)
	if err := rest.Seek(first.Position()); err != nil {
		t.Fatal(err)
	}
	papers, rejected, err := seeds.Collect(rest)
	if err != nil {
		t.Fatal(err)
	}
	if len(papers) != 1000 || len(rejected) != 0 || papers[0].ID != "openreview:note1500" || requests.Load()-asked != 1 {
		t.Errorf("resumed at %s: %d papers from %s in %d requests; want 1000 from note1500 in 1",
			first.Position(), len(papers), papers[0].ID, requests.Load()-asked)
	}
	if err := NewReader(context.Background(), nil, srv.URL, venue).Seek("-1"); err == nil {
		t.Error("a negative position was taken")
	}
}
