package retryafter

import (
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		in string
		d  time.Duration
		ok bool
	}{
		{"120", 2 * time.Minute, true},
		{" 0 ", 0, true},
		{"Mon, 30 Nov 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Mon, 30 Nov 2026 11:00:00 GMT", 0, true}, // past: retry now
		{"", 0, false},
		{"-5", 0, false},
		{"soon", 0, false},
	} {
		if d, ok := Parse(tt.in, now); d != tt.d || ok != tt.ok {
			t.Errorf("Parse(%q) = %v, %v; want %v, %v", tt.in, d, ok, tt.d, tt.ok)
		}
	}
}
