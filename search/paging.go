package search

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/papersearch/papersearch"
)

// ranking is a query's whole ranking, fused once over the query's
// candidates whatever the page, so that pages of any size, put together,
// are one page of their total size (ids, order and scores). Each page is
// cut from it (see pageAfter): the ranking of the first candidates (the
// CandidateDepth best of each retrieval, or an aspect query's AspectDepth
// nearest), then, for pages past it, the papers the deeper ranking (of the
// maxSeen best) adds, in its order.
type ranking struct {
	first []Fused
	// more reports that a retrieval of first was cut at its depth, so that
	// deeper may find papers first lacks.
	more bool
	// deeper ranks the query's candidates to depth maxSeen.
	deeper func(ctx context.Context) ([]Fused, error)
}

// upTo returns the ranking long enough to hold want papers not in seen,
// or all of it, and whether papers may follow what it returns.
//
// The papers the deeper ranking adds come in its order, each scored at
// most as the paper before it: the deeper ranking's scores are its own
// fusion's (normalised over its own candidates, in hybrid mode), and the
// first ranking's last papers, the worst of its candidates, score about
// 0, so the added papers' own scores would rise past them. Scores never
// rise down a ranking.
func (r ranking) upTo(ctx context.Context, want int, seen map[string]bool) ([]Fused, bool, error) {
	list := r.first
	if !r.more || r.deeper == nil || unseen(list, seen) >= want {
		return list, r.more && r.deeper != nil, nil
	}
	deep, err := r.deeper(ctx)
	if err != nil {
		return nil, false, err
	}
	in := make(map[string]bool, len(list))
	for _, x := range list {
		in[x.ID] = true
	}
	list = slices.Clip(list)
	for _, x := range deep {
		if !in[x.ID] {
			if n := len(list); n > 0 {
				x.Score = min(x.Score, list[n-1].Score)
			}
			list = append(list, x)
		}
	}
	return list, false, nil
}

func unseen(list []Fused, seen map[string]bool) int {
	n := 0
	for _, x := range list {
		if !seen[x.ID] {
			n++
		}
	}
	return n
}

// cut reports whether a retrieval that returned n of depth was cut short.
func cut(n, depth int) bool { return n >= depth }

// pageAfter is the one place a page is cut: the next papers of r not in
// seen, at most limit of them, and whether a page follows. Paging stops at
// the ranking's first maxSeen papers: the page that reaches them is cut
// there whatever its limit, so pages of every size put together are the
// same papers in the same order.
func (r ranking) pageAfter(ctx context.Context, seen []string, limit int) ([]Fused, bool, error) {
	wasSeen := make(map[string]bool, len(seen))
	for _, id := range seen {
		wasSeen[id] = true
	}
	size := max(0, min(limit, maxSeen-len(seen)))
	ranked, more, err := r.upTo(ctx, size, wasSeen)
	if err != nil {
		return nil, false, err
	}
	var next []Fused
	rest := 0 // unseen papers after the page
	for _, x := range ranked {
		switch {
		case wasSeen[x.ID]:
		case len(next) < size:
			next = append(next, x)
		default:
			rest++
		}
	}
	return next, (rest > 0 || more) && len(next) > 0 && len(seen)+len(next) < maxSeen, nil
}

// pageAt is where a request's page starts: when the request arrived, the
// fingerprint its cursors carry and the ids its cursor says were seen.
type pageAt struct {
	start       time.Time
	fingerprint string
	seen        []string
}

// at is where the page of a request that arrived at start and carries
// cursor starts, its cursors fingerprinted fp.
func (e *Engine) at(start time.Time, cursor, fp string) (pageAt, error) {
	seen, err := e.seen(cursor, fp)
	return pageAt{start: start, fingerprint: fp, seen: seen}, err
}

// page takes the next page of q from r, the papers not yet seen, fetches
// them and explains them (with queryVec, the query's dense vector).
func (e *Engine) page(ctx context.Context, at pageAt, res Results, r ranking, q Query, queryVec []float32) (Results, error) {
	start, seen, fingerprint := at.start, at.seen, at.fingerprint
	next, more, err := r.pageAfter(ctx, seen, q.Limit)
	if err != nil {
		return Results{}, err
	}
	ids := make([]string, len(next))
	for i, x := range next {
		ids[i] = x.ID
	}
	papers, err := e.store.Lookup(ctx, ids)
	if err != nil {
		return Results{}, fmt.Errorf("fetch hits: %w", err)
	}
	for _, x := range next {
		p, ok := papers[x.ID]
		if !ok {
			continue // deleted since retrieval
		}
		h := papersearch.Hit{ID: x.ID, Rank: len(seen) + len(res.Hits) + 1, Score: x.Score, Paper: p}
		if q.Explain {
			h.Explanation = explainRanks(x)
		}
		res.Hits = append(res.Hits, h)
	}
	if q.Explain {
		if err := e.explainText(ctx, res.Hits, q.Text, queryVec); err != nil {
			return Results{}, fmt.Errorf("explain: %w", err)
		}
	}
	if more {
		res.NextCursor = e.encodeCursor(cursorState{V: 1, Query: fingerprint, Seen: append(slices.Clip(seen), ids...)})
	}
	info, err := e.Index(ctx)
	if err != nil {
		return Results{}, err
	}
	res.Index, res.Took = info, time.Since(start)
	return res, nil
}

// maxSeen bounds how deep cursors page: the ids already returned travel in
// the cursor.
const maxSeen = 1000

// cursorState is what a cursor carries: the query it belongs to and the
// papers already returned, which later pages skip, so a page never
// repeats a paper and every paper not yet returned stays eligible however
// the store changes.
type cursorState struct {
	V     int      `json:"v"`
	Query string   `json:"q"`
	Seen  []string `json:"s"`
}

// cursorMAC is how many bytes of a cursor's HMAC-SHA256 it carries.
const cursorMAC = 16

// newCursorKey returns a random key, for an engine given none: its cursors
// then hold for its own life only.
func newCursorKey() []byte {
	k := make([]byte, 32)
	rand.Read(k)
	return k
}

// encodeCursor signs c with the engine's key (Options.CursorKey): a
// cursor is its state and a MAC of it, so no client can forge one (a seen
// list of made-up ids paged past the documented depth).
func (e *Engine) encodeCursor(c cursorState) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(e.cursorMAC(b))
}

func (e *Engine) cursorMAC(b []byte) []byte {
	m := hmac.New(sha256.New, e.opts.CursorKey)
	m.Write(b)
	return m.Sum(nil)[:cursorMAC]
}

func (e *Engine) decodeCursor(s, fingerprint string) (cursorState, error) {
	var c cursorState
	notOurs := missingField("cursor", "names no page: it is not a cursor this service issued")
	body, sig, ok := strings.Cut(s, ".")
	b, err := base64.RawURLEncoding.DecodeString(body)
	if !ok || err != nil {
		return c, notOurs
	}
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(mac, e.cursorMAC(b)) {
		return c, notOurs
	}
	if json.Unmarshal(b, &c) != nil || c.V != 1 || len(c.Seen) > maxSeen {
		return c, notOurs
	}
	if c.Query != fingerprint {
		return c, missingField("cursor", "names no page of this query: it belongs to another; send the same query with it")
	}
	return c, nil
}

// fingerprint identifies what a cursor may continue.
func (q Query) fingerprint(kind string) string {
	b, _ := json.Marshal([]any{kind, q.Text, q.Like, q.Unlike, q.Filter, q.Mode})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func (e *Engine) seen(cursor, fingerprint string) ([]string, error) {
	if cursor == "" {
		return nil, nil
	}
	c, err := e.decodeCursor(cursor, fingerprint)
	if err != nil {
		return nil, err
	}
	return c.Seen, nil
}
