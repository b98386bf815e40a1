package papersearch

import (
	"fmt"
	"regexp"
	"time"
)

// A paper's dates. Date is the day its record says it was published (for
// a preprint, first posted): "2026-11-03", or "2026-11" where the record
// names only the month. Added is when this service first stored it. A
// filter bounds either (Filter.Since, Filter.Until, Filter.By).

// DatePattern is the form of a paper's date, as a regular expression Go
// and JSON Schema read alike: a day or a month, by the calendar.
const DatePattern = `^[0-9]{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12][0-9]|3[01]))?$`

var dateForm = regexp.MustCompile(DatePattern) // read-only after init

// ErrBadDate is the error of a paper's date that is not a day or a month
// of the calendar.
var ErrBadDate = fmt.Errorf("date must be a day (YYYY-MM-DD) or a month (YYYY-MM) of the calendar, with a year from 1 to %d", MaxYear)

// ParseDate returns the first and last days of a paper's date d, and
// whether d is one.
func ParseDate(d string) (first, last time.Time, ok bool) {
	if !dateForm.MatchString(d) {
		return time.Time{}, time.Time{}, false
	}
	if len(d) == len("2006-01") {
		t, err := time.Parse("2006-01", d)
		if err != nil || t.Year() < 1 {
			return time.Time{}, time.Time{}, false
		}
		return t, t.AddDate(0, 1, -1), true
	}
	t, err := time.Parse(time.DateOnly, d)
	if err != nil || t.Year() < 1 { // 2026-02-30 matches the pattern, not the calendar
		return time.Time{}, time.Time{}, false
	}
	return t, t, true
}

// DateSpan is the days a paper was published on as far as its record
// says: its date's (a day, or a month's days), else its year's, else none
// (ok false).
func DateSpan(p Paper) (first, last time.Time, ok bool) {
	if first, last, ok := ParseDate(p.Date); ok {
		return first, last, true
	}
	if p.Year > 0 {
		first := time.Date(p.Year, time.January, 1, 0, 0, 0, 0, time.UTC)
		return first, first.AddDate(1, 0, -1), true
	}
	return time.Time{}, time.Time{}, false
}

// Day is the days since 1970-01-01 of t's day (UTC), the unit the stores
// index a paper's date in.
func Day(t time.Time) int64 {
	return t.UTC().Truncate(24*time.Hour).Unix() / 86400
}

// DateBy names what a filter's date bounds apply to.
type DateBy string

const (
	// ByPublished bounds the days a paper was published on (DateSpan): a
	// paper matches when any of them is within the bounds, so one known
	// only by its year matches bounds within that year. The default.
	ByPublished DateBy = "published"
	// ByAdded bounds when the paper was first stored here.
	ByAdded DateBy = "added"
)

// Bound is one end of a filter's date range as it is written: a day
// ("2026-11-01", all of it in UTC) or an instant in RFC 3339
// ("2026-11-01T09:30:00Z"); "" leaves that end open.
type Bound string

// Span returns the first and last instants b covers (a day's last
// nanosecond, for a day), or an error saying what b must be.
func (b Bound) Span() (first, last time.Time, err error) {
	s := string(b)
	if t, err := time.Parse(time.DateOnly, s); err == nil && len(s) == len(time.DateOnly) && t.Year() >= 1 {
		return t, t.AddDate(0, 0, 1).Add(-time.Nanosecond), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() < 1 || t.Year() > MaxYear {
		return time.Time{}, time.Time{}, fmt.Errorf("must be a day (YYYY-MM-DD) or an RFC 3339 time, got %q", s)
	}
	return t.UTC(), t.UTC(), nil
}

// EarlierDate is the earlier of two papers' dates, "" counting as unknown;
// of a day and the month holding it, the day.
func EarlierDate(a, b string) string {
	fa, _, oka := ParseDate(a)
	fb, _, okb := ParseDate(b)
	switch {
	case !oka:
		return b
	case !okb:
		return a
	case fa.Before(fb) || fa.Equal(fb) && len(a) >= len(b):
		return a
	}
	return b
}

// EarlierAdded is the earlier of two times a paper was added, a zero one
// counting as unknown.
func EarlierAdded(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}
