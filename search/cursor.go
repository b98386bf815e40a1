package search

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
)

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
