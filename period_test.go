package papersearch

import (
	"fmt"
	"testing"
	"time"
)

// TestParsePeriod: every period of the pattern is at most 366 days, and
// the longest of each unit are in it.
func TestParsePeriod(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
	}{{"1h", time.Hour}, {"36h", 36 * time.Hour}, {"8784h", 366 * 24 * time.Hour}, {"7d", 7 * 24 * time.Hour}, {"366d", 366 * 24 * time.Hour}, {"52w", 52 * 7 * 24 * time.Hour}} {
		if got, err := ParsePeriod(tt.in); err != nil || got != tt.want {
			t.Errorf("ParsePeriod(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "0d", "8785h", "367d", "53w", "07d", "1.5d", "1m", "7 d", "-1d", "d"} {
		if _, err := ParsePeriod(in); err == nil {
			t.Errorf("ParsePeriod(%q) accepted", in)
		}
	}
	for n := 1; n < 10000; n++ {
		for unit, d := range map[string]time.Duration{"h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
			_, err := ParsePeriod(fmt.Sprint(n, unit))
			if ok := time.Duration(n)*d <= 366*24*time.Hour; ok != (err == nil) {
				t.Errorf("%d%s: accepted %v, within 366 days %v", n, unit, err == nil, ok)
			}
		}
	}
}
