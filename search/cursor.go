package search

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
)

// maxSeen bounds how deep cursors page: the ids already returned travel in
// the cursor.
const maxSeen = 1000

// cursorState is what a cursor carries: the query it belongs to and the
// papers already returned, which later pages exclude, so a page never
// repeats a paper and every paper not yet returned stays eligible however
// the store changes.
type cursorState struct {
	V     int      `json:"v"`
	Query string   `json:"q"`
	Seen  []string `json:"s"`
}

func encodeCursor(c cursorState) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s, fingerprint string) (cursorState, error) {
	var c cursorState
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &c) != nil || c.V != 1 {
		return c, &FieldError{Field: "cursor", Reason: "names no page: it is not a cursor this service issued", Err: ErrNotFound}
	}
	if c.Query != fingerprint {
		return c, &FieldError{Field: "cursor", Reason: "names no page of this query: it belongs to another; send the same query with it",
			Err: ErrNotFound}
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
	c, err := decodeCursor(cursor, fingerprint)
	if err != nil {
		return nil, err
	}
	return c.Seen, nil
}
