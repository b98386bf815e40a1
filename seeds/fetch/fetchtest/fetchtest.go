// Package fetchtest serves fakes of the paged APIs papersearch imports
// from (arXiv's API, OpenReview's API v2, OpenAlex) on 127.0.0.1, for the
// tests of the readers and of what runs them. Each fake pages as its API
// does, refuses a query it was not made for as its API does, counts the
// requests it answers, and refuses the first request for its second page
// once, with Retry-After: 1, as a rate-limited API does.
package fetchtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Upstream is a fake API server.
type Upstream struct {
	// URL is where it answers, as a reader's base URL.
	URL      string
	requests atomic.Int64
	mu       sync.Mutex
	asked    []url.Values
	before   func(*http.Request)
}

// Requests is how many requests it has answered.
func (u *Upstream) Requests() int64 { return u.requests.Load() }

// Asked returns the query parameters of the requests answered since the
// last call, in order, and forgets them.
func (u *Upstream) Asked() []url.Values {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := u.asked
	u.asked = nil
	return out
}

// Before sets f to be called with each request before it is answered (a
// test interrupting what reads at a page, say); nil for none.
func (u *Upstream) Before(f func(*http.Request)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.before = f
}

// serve starts an Upstream that answers each request with page, except
// that the first request for which second says it asks for the second
// page is refused with status, body and Retry-After: 1. It closes when t
// ends.
func serve(t testing.TB, second func(*http.Request) bool, status int, body string, page http.HandlerFunc) *Upstream {
	u := &Upstream{}
	var throttled atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.requests.Add(1)
		u.mu.Lock()
		u.asked = append(u.asked, r.URL.Query())
		before := u.before
		u.mu.Unlock()
		if before != nil {
			before(r)
		}
		if second(r) && !throttled.Swap(true) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(status)
			io.WriteString(w, body)
			return
		}
		page(w, r)
	}))
	t.Cleanup(srv.Close)
	u.URL = srv.URL
	return u
}

// ArXiv answers as arXiv's API does for the search query, finding n
// entries in pages of pageSize: Atom with arXiv's and OpenSearch's
// namespaces. Entry i is arXiv 2401.i (version 2), "Diffusion \emph{models}
// number i" by Ada Lovelace and Author i, published 2024-01-(1+i%28);
// entry 0 has a journal reference (NeurIPS 2024) and a DOI
// (10.5555/NIPS.0), entry 5 no summary. The second page is refused once
// with a 503; another query with a 400 and an Atom error entry.
func ArXiv(t testing.TB, query string, n, pageSize int) *Upstream {
	second := func(r *http.Request) bool {
		return r.URL.Query().Get("search_query") == query && r.URL.Query().Get("start") == strconv.Itoa(pageSize)
	}
	return serve(t, second, http.StatusServiceUnavailable, "busy", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("search_query") != query {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `<feed xmlns="http://www.w3.org/2005/Atom"><entry><title>Error</title><summary>malformed query</summary></entry></feed>`)
			return
		}
		start, _ := strconv.Atoi(q.Get("start"))
		count, _ := strconv.Atoi(q.Get("max_results"))
		var entries []arxivEntry
		for i := start; i < min(start+count, n); i++ {
			e := arxivEntry{ID: fmt.Sprintf("2401.%05d", i), Published: fmt.Sprintf("2024-01-%02dT10:00:00Z", 1+i%28),
				Title: fmt.Sprintf("Diffusion \\emph{models} number %d", i), Summary: fmt.Sprintf("  We diffuse %d things\n  in %d steps.\n", i, i%9),
				Authors: []string{"Ada Lovelace", fmt.Sprintf("Author %d", i)}}
			if i == 0 {
				e.Journal, e.DOI = "NeurIPS 2024", "10.5555/NIPS.0"
			}
			if i == 5 {
				e.Summary = ""
			}
			entries = append(entries, e)
		}
		writeArXiv(w, n, entries)
	})
}

// arxivEntry is an entry of arXiv's fake: ID without version (v2 is
// given), Published in RFC 3339.
type arxivEntry struct {
	ID, Published, Title, Summary string
	Authors                       []string
	Journal, DOI                  string
}

// writeArXiv answers as arXiv's API does: Atom with arXiv's and
// OpenSearch's namespaces, total the results the query finds.
func writeArXiv(w http.ResponseWriter, total int, entries []arxivEntry) {
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <title>arXiv Query</title><opensearch:totalResults>%d</opensearch:totalResults>`, total)
	for _, e := range entries {
		doi := ""
		if e.DOI != "" {
			doi = "\n    <arxiv:doi>" + e.DOI + "</arxiv:doi>"
		}
		fmt.Fprintf(&b, `
  <entry>
    <id>http://arxiv.org/abs/%sv2</id>
    <published>%s</published>
    <title>%s</title>
    <summary>%s</summary>
    `, e.ID, e.Published, e.Title, e.Summary)
		for _, a := range e.Authors {
			fmt.Fprintf(&b, "<author><name>%s</name></author>", a)
		}
		fmt.Fprintf(&b, `
    <arxiv:journal_ref>%s</arxiv:journal_ref>%s
    <arxiv:primary_category term="cs.LG"/>
  </entry>`, e.Journal, doi)
	}
	b.WriteString("\n</feed>\n")
	w.Header().Set("Content-Type", "application/atom+xml")
	io.WriteString(w, b.String())
}

// OpenReview answers GET /notes as OpenReview's API v2 does for a venue
// (content.venueid) of n accepted notes, in pages of pageSize: note i is
// "note%04d", "Paper i", "We study problem i with method i%13.", by Ada
// Lovelace and Author i; note 7 has no abstract, note 11 is malformed
// (authors not a list). The second page is refused once with a 429;
// another venue with a 404.
func OpenReview(t testing.TB, venue string, n, pageSize int) *Upstream {
	second := func(r *http.Request) bool {
		return r.URL.Query().Get("content.venueid") == venue && r.URL.Query().Get("offset") == strconv.Itoa(pageSize)
	}
	return serve(t, second, http.StatusTooManyRequests, `{"name":"RateLimitError","message":"Too many requests"}`, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/notes" || q.Get("content.venueid") != venue {
			http.Error(w, `{"name":"NotFoundError","message":"no such venue"}`, http.StatusNotFound)
			return
		}
		offset, _ := strconv.Atoi(q.Get("offset"))
		limit, _ := strconv.Atoi(q.Get("limit"))
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
	})
}

// OpenAlex answers GET /works as OpenAlex does for a filter finding n
// works, cursor-paged in pages of pageSize (the cursor is the next
// offset), every request carrying mailto (the polite pool's e-mail): work
// i is W(1000+i), "Work i", published 2026-01-(1+i%28), "We study
// topic<i> and we study.", by
// Ada Lovelace at NeurIPS; even works have the DOI 10.1234/W<i>, every
// fifth an arXiv version (2601.i) among its locations, and work 3 no
// abstract (a null inverted index). The second page is refused once with
// a 429; another filter or no mailto with a 403.
func OpenAlex(t testing.TB, filter, mailto string, n, pageSize int) *Upstream {
	second := func(r *http.Request) bool {
		q := r.URL.Query()
		return q.Get("filter") == filter && q.Get("mailto") == mailto && q.Get("cursor") == strconv.Itoa(pageSize)
	}
	return serve(t, second, http.StatusTooManyRequests, "", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/works" || q.Get("filter") != filter || q.Get("mailto") != mailto {
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"error":"Invalid query parameters error.","message":"filter is not valid"}`)
			return
		}
		offset := 0
		if c := q.Get("cursor"); c != "*" {
			offset, _ = strconv.Atoi(c)
		}
		var results []map[string]any
		for i := offset; i < min(offset+pageSize, n); i++ {
			results = append(results, openAlexWork(i))
		}
		var next *string
		if offset+pageSize < n {
			s := strconv.Itoa(offset + pageSize)
			next = &s
		}
		json.NewEncoder(w).Encode(map[string]any{"meta": map[string]any{"count": n, "next_cursor": next}, "results": results})
	})
}

// openAlexWork is work i of OpenAlex's fake.
func openAlexWork(i int) map[string]any {
	work := map[string]any{
		"id": fmt.Sprintf("https://openalex.org/W%d", 1000+i), "title": fmt.Sprintf("Work %d", i),
		"publication_year": 2026, "publication_date": fmt.Sprintf("2026-01-%02d", 1+i%28),
		"abstract_inverted_index": map[string][]int{"We": {0}, "study": {1}, fmt.Sprintf("topic%d", i): {2}, "and": {3},
			"we": {4}, "study.": {5}},
		"authorships":      []map[string]any{{"author": map[string]any{"display_name": "Ada Lovelace"}}},
		"primary_location": map[string]any{"source": map[string]any{"display_name": "NeurIPS"}, "landing_page_url": nil},
		"doi":              nil,
	}
	if i%2 == 0 {
		work["doi"] = fmt.Sprintf("https://doi.org/10.1234/W%d", i)
	}
	if i == 3 {
		work["abstract_inverted_index"] = nil
	}
	if i%5 == 0 { // an arXiv version among the locations
		work["locations"] = []map[string]any{{"landing_page_url": "https://doi.org/x"},
			{"landing_page_url": fmt.Sprintf("https://arxiv.org/abs/2601.%05dv3", i)}}
	}
	return work
}
