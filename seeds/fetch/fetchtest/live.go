package fetchtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Live is a fake API whose source grows, for what follows a source over
// time (watches): Publish adds papers, paper k (from 0, in the order
// published) dated Day(k).
type Live struct {
	*Upstream
	n atomic.Int64
}

// Publish adds k papers.
func (l *Live) Publish(k int) { l.n.Add(int64(k)) }

// Published is how many papers there are.
func (l *Live) Published() int { return int(l.n.Load()) }

// Day is the day paper k of a live fake is published: 2026-01-01, then a
// day after each paper.
func Day(k int) time.Time { return time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC).AddDate(0, 0, k) }

// never throttles no request.
func never(*http.Request) bool { return false }

// ArXivLive answers as arXiv's API does for the search query, as given or
// narrowed by a submittedDate range as arxiv.Since writes it, newest
// first: paper k is arXiv 2601.k, "Live paper k", submitted Day(k).
func ArXivLive(t testing.TB, query string, pageSize int) *Live {
	l := &Live{}
	ranged := regexp.MustCompile(`^\(` + regexp.QuoteMeta(query) + `\) AND submittedDate:\[([0-9]{12}) TO ([0-9]{12})\]$`)
	l.Upstream = serve(t, never, 0, "", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		from, to := "000000000000", "999999999999"
		if m := ranged.FindStringSubmatch(q.Get("search_query")); m != nil {
			from, to = m[1], m[2]
		} else if q.Get("search_query") != query {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var found []arxivEntry
		for k := l.Published() - 1; k >= 0; k-- {
			if at := Day(k).Format("200601021504"); at < from || at > to {
				continue
			}
			found = append(found, arxivEntry{ID: fmt.Sprintf("2601.%05d", k), Published: Day(k).Format(time.RFC3339),
				Title: fmt.Sprintf("Live paper %d", k), Summary: fmt.Sprintf("We follow topic %d as it grows.", k), Authors: []string{"Ada Lovelace"}})
		}
		start, _ := strconv.Atoi(q.Get("start"))
		count, _ := strconv.Atoi(q.Get("max_results"))
		writeArXiv(w, len(found), found[min(start, len(found)):min(start+count, len(found))])
	})
	return l
}

// OpenAlexLive answers GET /works as OpenAlex does for the filter, as
// given or with from_publication_date as openalex.Since adds it,
// cursor-paged (the cursor is the next offset), oldest first: work k is
// W(5000+k), "Live work k", published Day(k).
func OpenAlexLive(t testing.TB, filter, mailto string, pageSize int) *Live {
	l := &Live{}
	l.Upstream = serve(t, never, 0, "", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		from := ""
		f, rest, _ := strings.Cut(q.Get("filter"), ",from_publication_date:")
		if f != filter || q.Get("mailto") != mailto || rest != "" && len(rest) != len(time.DateOnly) {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		from = rest
		var found []map[string]any
		for k := range l.Published() {
			day := Day(k).Format(time.DateOnly)
			if day < from {
				continue
			}
			found = append(found, map[string]any{"id": fmt.Sprintf("https://openalex.org/W%d", 5000+k), "title": fmt.Sprintf("Live work %d", k),
				"publication_year": Day(k).Year(), "publication_date": day,
				"abstract_inverted_index": map[string][]int{"Work": {0}, fmt.Sprintf("w%d", k): {1}, "grows.": {2}},
				"authorships":             []map[string]any{{"author": map[string]any{"display_name": "Ada Lovelace"}}}})
		}
		offset := 0
		if c := q.Get("cursor"); c != "*" {
			offset, _ = strconv.Atoi(c)
		}
		page := found[min(offset, len(found)):min(offset+pageSize, len(found))]
		var next *string
		if offset+pageSize < len(found) {
			s := strconv.Itoa(offset + pageSize)
			next = &s
		}
		json.NewEncoder(w).Encode(map[string]any{"meta": map[string]any{"count": len(found), "next_cursor": next}, "results": page})
	})
	return l
}

// OpenReviewLive answers GET /notes as OpenReview's API v2 does for a
// venue (content.venueid), offset-paged, in the order notes were added:
// note k is "live%04d", "Live note k", published Day(k).
func OpenReviewLive(t testing.TB, venue string, pageSize int) *Live {
	l := &Live{}
	l.Upstream = serve(t, never, 0, "", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/notes" || q.Get("content.venueid") != venue {
			http.Error(w, `{"name":"NotFoundError","message":"no such venue"}`, http.StatusNotFound)
			return
		}
		n := l.Published()
		offset, _ := strconv.Atoi(q.Get("offset"))
		limit, _ := strconv.Atoi(q.Get("limit"))
		notes := []map[string]any{}
		for k := offset; k < min(offset+limit, n); k++ {
			notes = append(notes, map[string]any{"id": fmt.Sprintf("live%04d", k), "forum": fmt.Sprintf("live%04d", k), "pdate": Day(k).UnixMilli(),
				"content": map[string]any{"title": map[string]any{"value": fmt.Sprintf("Live note %d", k)},
					"abstract": map[string]any{"value": fmt.Sprintf("We study live problem %d.", k)},
					"authors":  map[string]any{"value": []string{"Ada Lovelace"}}, "venueid": map[string]any{"value": venue}}})
		}
		json.NewEncoder(w).Encode(map[string]any{"notes": notes, "count": n})
	})
	return l
}
