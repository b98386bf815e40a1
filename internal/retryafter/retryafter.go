// Package retryafter reads the Retry-After header (RFC 9110 §10.2.3), for
// the clients of the embedding endpoint and of the paper sources.
package retryafter

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Parse reads a Retry-After value, delay seconds or an HTTP date, as a
// delay from now; ok is false for an empty or unreadable value. A date in
// the past is a zero delay.
func Parse(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
