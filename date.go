package papersearch

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"time"
)

// A paper's dates. Date is the day its record says it was published (for
// a preprint, first posted): "2026-11-03", or "2026-11" where the record
// names only the month. Added is when this service first stored it. A
// filter bounds either (Filter.Since, Filter.Until, Filter.By).

// dayPattern is a day of the calendar, each month with its own last day
// (February's the 29th: the 29th of a common year is read as March 1st).
const dayPattern = `[0-9]{4}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-9]))`

// DatePattern is the form of a paper's date, as a regular expression Go
// and JSON Schema read alike: a day (YYYY-MM-DD) or a month (YYYY-MM).
const DatePattern = `^(` + dayPattern + `|[0-9]{4}-(0[1-9]|1[0-2]))$`

// BoundPattern is the form of a filter's date bound, as a regular
// expression Go and JSON Schema read alike: a day, or an RFC 3339 time
// (in upper case, no leap second).
const BoundPattern = `^` + dayPattern + `(T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,9})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9]))?$`

var (
	dateForm  = regexp.MustCompile(DatePattern)  // read-only after init
	boundForm = regexp.MustCompile(BoundPattern) // read-only after init
)

// ErrBadDate is the error of a paper's date that is not a day or a month.
var ErrBadDate = errors.New("date must be a day (YYYY-MM-DD) or a month (YYYY-MM)")

// calendarDay is the day "YYYY-MM-DD" (matching dayPattern) in UTC.
func calendarDay(s string) time.Time {
	y, _ := strconv.Atoi(s[0:4])
	m, _ := strconv.Atoi(s[5:7])
	d, _ := strconv.Atoi(s[8:10])
	return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
}

// ParseDate returns the first and last days of a paper's date d (see
// DatePattern), and whether d is one.
func ParseDate(d string) (first, last time.Time, ok bool) {
	if !dateForm.MatchString(d) {
		return time.Time{}, time.Time{}, false
	}
	if len(d) == len("2006-01") {
		first = calendarDay(d + "-01")
		return first, first.AddDate(0, 1, -1), true
	}
	first = calendarDay(d)
	return first, first, true
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
// nanosecond, for a day), or an error saying what b must be (see
// BoundPattern).
func (b Bound) Span() (first, last time.Time, err error) {
	s := string(b)
	if !boundForm.MatchString(s) {
		return time.Time{}, time.Time{}, fmt.Errorf("must be a day (YYYY-MM-DD) or an RFC 3339 time (YYYY-MM-DDThh:mm:ssZ), got %q", s)
	}
	day := calendarDay(s)
	if len(s) == len(time.DateOnly) {
		return day, day.AddDate(0, 0, 1).Add(-time.Nanosecond), nil
	}
	// The day is the calendar's (a 29th of February rolls over as above);
	// the time of day and zone are RFC 3339's, read on a day that exists.
	t, err := time.Parse(time.RFC3339Nano, "2000-01-01"+s[len(time.DateOnly):])
	if err != nil {
		return time.Time{}, time.Time{}, fmt.Errorf("must be an RFC 3339 time, got %q: %w", s, err)
	}
	t = t.UTC()
	at := day.Add(t.Sub(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)))
	return at, at, nil
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

// UnmarshalJSON reads a bound, refusing an empty one: JSON says "no
// bound" by leaving it out or with null (which leaves b as it was).
func (b *Bound) UnmarshalJSON(data []byte) error {
	return nonEmptyString(data, (*string)(b), reflect.TypeFor[Bound]())
}

// Form says what a bound must be, for an error naming it.
func (Bound) Form() string { return "a day (YYYY-MM-DD) or an RFC 3339 time" }

// UnmarshalJSON reads which date a filter bounds, refusing an empty
// name: JSON says "the default" by leaving it out or with null.
func (b *DateBy) UnmarshalJSON(data []byte) error {
	return nonEmptyString(data, (*string)(b), reflect.TypeFor[DateBy]())
}

// Form says what a DateBy must be, for an error naming it.
func (DateBy) Form() string { return string(ByPublished) + " or " + string(ByAdded) }

// nonEmptyString decodes a JSON string that may not be empty into dst;
// null leaves dst alone. Another value, or "", is a *json.UnmarshalTypeError
// of type t, which the decoder places at its field.
func nonEmptyString(data []byte, dst *string, t reflect.Type) error {
	if string(data) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil || s == "" {
		return &json.UnmarshalTypeError{Value: string(data), Type: t}
	}
	*dst = s
	return nil
}
