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
func (r ranking) upTo(ctx context.Context, want int, seen seenPapers) ([]Fused, bool, error) {
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

func unseen(list []Fused, seen seenPapers) int {
	n := 0
	for _, x := range list {
		if !seen.has(x.ID) {
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
func (r ranking) pageAfter(ctx context.Context, seen seenPapers, limit int) ([]Fused, bool, error) {
	size := max(0, min(limit, maxSeen-seen.len()))
	ranked, more, err := r.upTo(ctx, size, seen)
	if err != nil {
		return nil, false, err
	}
	var next []Fused
	rest := 0 // unseen papers after the page
	for _, x := range ranked {
		switch {
		case seen.has(x.ID):
		case len(next) < size:
			next = append(next, x)
		default:
			rest++
		}
	}
	return next, (rest > 0 || more) && len(next) > 0 && seen.len()+len(next) < maxSeen, nil
}

// seenPapers is what a cursor says a query's pages returned: a digest of
// each paper's id (seenDigest bytes of its HMAC-SHA256 under the cursor
// key), in the order they were returned, which later pages skip. A
// digest, not the id, keeps a cursor's size bounded whatever the ids
// (about 6.7 KB at maxSeen papers, where 1,000 ids of 25 characters took
// 34 KB, past what proxies take in a URL or a header); another paper's id
// shares a paper's digest with odds of 1 in 2⁴⁰, and keyed, no one
// without the key can make an id that does (to hide a paper from later
// pages).
type seenPapers struct {
	key     []byte
	digests []byte
	set     map[[seenDigest]byte]bool
}

// seenDigest is how many bytes of each id's keyed digest a cursor carries.
const seenDigest = 5

func (s seenPapers) digestOf(id string) [seenDigest]byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(id))
	return [seenDigest]byte(m.Sum(nil)[:seenDigest])
}

// add records a paper returned.
func (s *seenPapers) add(id string) {
	d := s.digestOf(id)
	s.digests = append(s.digests, d[:]...)
	if s.set == nil {
		s.set = map[[seenDigest]byte]bool{}
	}
	s.set[d] = true
}

// has reports whether a page returned the paper (a first page's query
// computes no digest).
func (s seenPapers) has(id string) bool { return len(s.set) > 0 && s.set[s.digestOf(id)] }

// len is how many papers the pages returned.
func (s seenPapers) len() int { return len(s.digests) / seenDigest }

// seenDigests reads a cursor's digests, made with key.
func seenDigests(key, b []byte) (seenPapers, bool) {
	if len(b)%seenDigest != 0 || len(b)/seenDigest > maxSeen {
		return seenPapers{}, false
	}
	s := seenPapers{key: key, digests: b, set: make(map[[seenDigest]byte]bool, len(b)/seenDigest)}
	for i := 0; i < len(b); i += seenDigest {
		s.set[[seenDigest]byte(b[i:i+seenDigest])] = true
	}
	return s, true
}

// pageAt is where a request's page starts: when the request arrived, the
// fingerprint its cursors carry and the papers its cursor says were seen.
type pageAt struct {
	start       time.Time
	fingerprint string
	seen        seenPapers
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
		h := papersearch.Hit{ID: x.ID, Rank: seen.len() + len(res.Hits) + 1, Score: x.Score, Paper: p}
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
		after := seenPapers{key: e.opts.CursorKey, digests: slices.Clip(seen.digests)}
		for _, id := range ids {
			after.add(id)
		}
		res.NextCursor = e.encodeCursor(fingerprint, after)
	}
	info, err := e.Index(ctx)
	if err != nil {
		return Results{}, err
	}
	res.Index, res.Took = info, time.Since(start)
	return res, nil
}

// maxSeen bounds how deep cursors page: a digest of each paper already
// returned travels in the cursor.
const maxSeen = 1000

// A cursor is, base64url-encoded, cursorVersion, the query's fingerprint
// (8 bytes) and the digests of the papers already returned (seenPapers),
// then "." and a MAC of that: later pages skip those papers, so a page
// never repeats one and every paper not yet returned stays eligible
// however the store changes. (Version 1, JSON with the ids themselves, is
// still read.)
const cursorVersion = 2

// cursorV1 is a version 1 cursor's state.
type cursorV1 struct {
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

// encodeCursor signs a cursor with the engine's key (Options.CursorKey):
// a cursor is its state and a MAC of it, so no client can forge one (a
// seen list paged past the documented depth).
func (e *Engine) encodeCursor(fingerprint string, seen seenPapers) string {
	fp, _ := hex.DecodeString(fingerprint)
	b := slices.Concat([]byte{cursorVersion}, fp, seen.digests)
	return base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(e.cursorMAC(b))
}

func (e *Engine) cursorMAC(b []byte) []byte {
	m := hmac.New(sha256.New, e.opts.CursorKey)
	m.Write(b)
	return m.Sum(nil)[:cursorMAC]
}

func (e *Engine) decodeCursor(s, fingerprint string) (seenPapers, error) {
	notOurs := missingField("cursor", "names no page: it is not a cursor this service issued")
	body, sig, ok := strings.Cut(s, ".")
	b, err := base64.RawURLEncoding.DecodeString(body)
	if !ok || err != nil || len(b) == 0 {
		return seenPapers{}, notOurs
	}
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(mac, e.cursorMAC(b)) {
		return seenPapers{}, notOurs
	}
	var query string
	var seen seenPapers
	switch {
	case b[0] == cursorVersion && len(b) >= 9:
		query = hex.EncodeToString(b[1:9])
		if seen, ok = seenDigests(e.opts.CursorKey, b[9:]); !ok {
			return seenPapers{}, notOurs
		}
	case b[0] == '{':
		var c cursorV1
		if json.Unmarshal(b, &c) != nil || c.V != 1 || len(c.Seen) > maxSeen {
			return seenPapers{}, notOurs
		}
		query, seen.key = c.Query, e.opts.CursorKey
		for _, id := range c.Seen {
			seen.add(id)
		}
	default:
		return seenPapers{}, notOurs
	}
	if query != fingerprint {
		return seenPapers{}, missingField("cursor", "names no page of this query: it belongs to another; send the same query with it")
	}
	return seen, nil
}

// fingerprint identifies what a cursor may continue.
func (q Query) fingerprint(kind string) string {
	b, _ := json.Marshal([]any{kind, q.Text, q.Like, q.Unlike, q.Filter, q.Mode})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func (e *Engine) seen(cursor, fingerprint string) (seenPapers, error) {
	if cursor == "" {
		return seenPapers{key: e.opts.CursorKey}, nil
	}
	return e.decodeCursor(cursor, fingerprint)
}
