package papersearch

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// PeriodPattern is the form of a period (a feed's window, a watch's
// interval), as a regular expression Go and JSON Schema read alike: a
// number of hours, days or weeks ("36h", "7d", "2w") of at most 366 days.
const PeriodPattern = `^(([1-9][0-9]{0,2}|[1-7][0-9]{3}|8[0-6][0-9]{2}|87[0-7][0-9]|878[0-4])h|([1-9][0-9]?|[12][0-9]{2}|3[0-5][0-9]|36[0-6])d|([1-9]|[1-4][0-9]|5[0-2])w)$`

var periodForm = regexp.MustCompile(PeriodPattern) // read-only after init

// ParsePeriod reads a period (PeriodPattern).
func ParsePeriod(s string) (time.Duration, error) {
	if !periodForm.MatchString(s) {
		return 0, fmt.Errorf("must be a number of hours, days or weeks of at most 366 days, such as 36h, 7d or 2w, got %q", s)
	}
	n, _ := strconv.Atoi(s[:len(s)-1])
	unit := map[byte]time.Duration{'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[s[len(s)-1]]
	return time.Duration(n) * unit, nil
}
