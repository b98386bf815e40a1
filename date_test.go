package papersearch

import (
	"errors"
	"testing"
	"time"
)

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func TestParseDate(t *testing.T) {
	for _, tt := range []struct {
		in          string
		first, last time.Time
		ok          bool
	}{
		{"2026-03-14", day(2026, 3, 14), day(2026, 3, 14), true},
		{"2026-02", day(2026, 2, 1), day(2026, 2, 28), true},
		{"2024-02", day(2024, 2, 1), day(2024, 2, 29), true},
		{"2024-02-29", day(2024, 2, 29), day(2024, 2, 29), true},
		{"2025-02-29", day(2025, 3, 1), day(2025, 3, 1), true}, // rolls over, as the pattern allows it
		{"0000-01-01", day(0, 1, 1), day(0, 1, 1), true},
		{"2026-04-31", time.Time{}, time.Time{}, false},
		{"2026-13", time.Time{}, time.Time{}, false},
		{"2026", time.Time{}, time.Time{}, false},
		{"26-03-14", time.Time{}, time.Time{}, false},
		{"2026-3-14", time.Time{}, time.Time{}, false},
		{"", time.Time{}, time.Time{}, false},
	} {
		first, last, ok := ParseDate(tt.in)
		if ok != tt.ok || !first.Equal(tt.first) || !last.Equal(tt.last) {
			t.Errorf("ParseDate(%q) = %v, %v, %v; want %v, %v, %v", tt.in, first, last, ok, tt.first, tt.last, tt.ok)
		}
	}
}

func TestDateSpan(t *testing.T) {
	for _, tt := range []struct {
		p           Paper
		first, last time.Time
		ok          bool
	}{
		{Paper{Date: "2026-03-14", Year: 2026}, day(2026, 3, 14), day(2026, 3, 14), true},
		{Paper{Date: "2026-03"}, day(2026, 3, 1), day(2026, 3, 31), true},
		{Paper{Year: 2025}, day(2025, 1, 1), day(2025, 12, 31), true},
		{Paper{}, time.Time{}, time.Time{}, false},
	} {
		first, last, ok := DateSpan(tt.p)
		if ok != tt.ok || !first.Equal(tt.first) || !last.Equal(tt.last) {
			t.Errorf("DateSpan(%+v) = %v, %v, %v", tt.p, first, last, ok)
		}
	}
	if Day(day(1970, 1, 2)) != 1 || Day(day(1969, 12, 31)) != -1 || Day(time.Date(2026, 1, 1, 23, 59, 0, 0, time.UTC)) != Day(day(2026, 1, 1)) {
		t.Error("Day does not count days since 1970-01-01")
	}
}

func TestBoundSpan(t *testing.T) {
	for _, tt := range []struct {
		in          Bound
		first, last time.Time
	}{
		{"2026-11-01", day(2026, 11, 1), day(2026, 11, 2).Add(-time.Nanosecond)},
		{"2026-11-01T09:30:00Z", time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC), time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC)},
		{"2026-11-01T00:30:00+02:00", time.Date(2026, 10, 31, 22, 30, 0, 0, time.UTC), time.Date(2026, 10, 31, 22, 30, 0, 0, time.UTC)},
		{"2026-11-01T09:30:00.25-01:00", time.Date(2026, 11, 1, 10, 30, 0, 250e6, time.UTC), time.Date(2026, 11, 1, 10, 30, 0, 250e6, time.UTC)},
		{"2025-02-29T12:00:00Z", time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC), time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)},
	} {
		first, last, err := tt.in.Span()
		if err != nil || !first.Equal(tt.first) || !last.Equal(tt.last) {
			t.Errorf("%q.Span() = %v, %v, %v; want %v, %v", tt.in, first, last, err, tt.first, tt.last)
		}
	}
	for _, bad := range []Bound{"", "yesterday", "2026-11", "2026-11-01 09:30:00Z", "2026-11-01t09:30:00z", "2026-11-01T24:00:00Z",
		"2026-11-01T23:59:60Z", "2026-11-31", "2026-11-01T09:30:00"} {
		if _, _, err := bad.Span(); err == nil {
			t.Errorf("%q.Span() succeeded", bad)
		}
	}
}

// FuzzBoundSpan: whatever matches BoundPattern (the OpenAPI document's
// rule) is read, so a request the document allows is never refused.
func FuzzBoundSpan(f *testing.F) {
	for _, s := range []string{"2026-11-01", "0000-02-29T23:59:59.999999999+23:59", "9999-12-31T00:00:00-00:00", "2026-11-01T09:30:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, _, err := Bound(s).Span(); boundForm.MatchString(s) != (err == nil) {
			t.Fatalf("%q: pattern match %v, Span error %v", s, boundForm.MatchString(s), err)
		}
	})
}

func TestEarlier(t *testing.T) {
	for _, tt := range []struct{ a, b, want string }{
		{"2026-03-14", "2025-01", "2025-01"}, {"", "2026-03", "2026-03"}, {"2026-03", "", "2026-03"},
		{"2026-03", "2026-03-01", "2026-03-01"}, {"2026-03-01", "2026-03", "2026-03-01"}, {"bad", "2026-01", "2026-01"},
	} {
		if got := EarlierDate(tt.a, tt.b); got != tt.want {
			t.Errorf("EarlierDate(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
	a, b := day(2026, 1, 1), day(2025, 1, 1)
	if !EarlierAdded(a, b).Equal(b) || !EarlierAdded(time.Time{}, a).Equal(a) || !EarlierAdded(a, time.Time{}).Equal(a) {
		t.Error("EarlierAdded does not keep the earlier known time")
	}
}

func TestCompleteDate(t *testing.T) {
	p, err := Complete(Paper{Abstract: "A.", Date: "2026-03"})
	if err != nil || p.Year != 2026 {
		t.Errorf("a date fills the year: %+v, %v", p, err)
	}
	if p, err := Complete(Paper{Abstract: "A.", Date: "2026-03-14", Year: 2025}); err != nil || p.Year != 2025 {
		t.Errorf("a year given stays: %+v, %v", p, err)
	}
	var fe *FieldError
	if _, err := Complete(Paper{Abstract: "A.", Date: "14 March 2026"}); !errors.As(err, &fe) || fe.Field != "date" || !errors.Is(err, ErrBadDate) {
		t.Errorf("a bad date: %v", err)
	}
}
