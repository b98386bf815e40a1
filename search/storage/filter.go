package storage

import (
	"math"
	"slices"
	"strings"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/lexical"
)

// DateRange is a filter's date bounds in the unit the stores index its
// date in: days since 1970-01-01 (papersearch.Day) of the days a paper
// was published on, for ByPublished; Unix seconds of when it was added,
// for ByAdded. lo and hi are inclusive, math.MinInt64 and math.MaxInt64
// where an end is open; ok is false when the filter bounds no date. The
// filter must be valid (search.ValidateFilter).
func DateRange(f papersearch.Filter) (by papersearch.DateBy, lo, hi int64, ok bool) {
	if f.Since == "" && f.Until == "" {
		return "", 0, 0, false
	}
	by = f.By
	if by == "" {
		by = papersearch.ByPublished
	}
	lo, hi = math.MinInt64, math.MaxInt64
	if first, _, err := f.Since.Span(); err == nil {
		lo = first.Unix()
		if first.Nanosecond() > 0 {
			lo++ // added times are whole seconds
		}
		if by == papersearch.ByPublished {
			lo = papersearch.Day(first)
		}
	}
	if _, last, err := f.Until.Span(); err == nil {
		hi = last.Unix()
		if by == papersearch.ByPublished {
			hi = papersearch.Day(last)
		}
	}
	return by, lo, hi, true
}

// NoDate is the day range indexed for a paper with no date and no year:
// first after last, so that no published range holds it.
var NoDate = [2]int64{math.MaxInt64, math.MinInt64}

// PaperDays is the range of days (papersearch.Day) a paper was published
// on, as the stores index it: its DateSpan, or NoDate.
func PaperDays(p papersearch.Paper) [2]int64 {
	first, last, ok := papersearch.DateSpan(p)
	if !ok {
		return NoDate
	}
	return [2]int64{papersearch.Day(first), papersearch.Day(last)}
}

// InDateRange reports whether a paper whose indexed dates are days (from
// PaperDays) and added (Unix seconds) falls within a range from DateRange.
func InDateRange(by papersearch.DateBy, lo, hi int64, days [2]int64, added int64) bool {
	if by == papersearch.ByAdded {
		return added >= lo && added <= hi
	}
	return days[1] >= lo && days[0] <= hi
}

// VenueKey is the form in which venues are compared, stored and filtered:
// case-insensitive, surrounding space ignored.
func VenueKey(venue string) string { return strings.ToLower(strings.TrimSpace(venue)) }

// FieldsFree reports whether f tests no field of a paper (year, venue,
// author, tags, dates): it allows every paper but those it excludes by id.
func FieldsFree(f papersearch.Filter) bool {
	return f.YearMin == 0 && f.YearMax == 0 && len(f.Venues) == 0 && strings.TrimSpace(f.Author) == "" && len(f.Tags) == 0 &&
		f.Since == "" && f.Until == ""
}

// TagKeys returns the filter's tags in the form papers hold them (lower
// case); a tag no paper can hold matches nothing.
func TagKeys(tags []string) []string {
	out := make([]string, len(tags))
	for i, t := range tags {
		out[i] = strings.ToLower(t)
	}
	return out
}

// AuthorWords splits an author filter or name into words, accents folded
// and lower-cased: "Schölkopf", "Scholkopf" and "scholkopf" are one.
func AuthorWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(papersearch.Fold(s)), func(r rune) bool { return !lexical.IsWordRune(r) })
}

// NameWords is AuthorWords of an author's name, with each word that an
// apostrophe splits also whole: "O'Brien" is "o", "brien" and "obrien",
// so that "obrien", "o'brien" and "brien" all find it (the filter's
// words as AuthorWords splits them, each starting some name word).
func NameWords(name string) []string {
	words := AuthorWords(name)
	for _, w := range strings.Fields(strings.ToLower(papersearch.Fold(name))) {
		if !strings.ContainsAny(w, apostrophes) {
			continue
		}
		for _, joined := range AuthorWords(strings.Map(func(r rune) rune {
			if strings.ContainsRune(apostrophes, r) {
				return -1
			}
			return r
		}, w)) {
			if !slices.Contains(words, joined) {
				words = append(words, joined)
			}
		}
	}
	return words
}

// apostrophes are the characters a name's apostrophe is written with:
// ASCII's, the typographic one and the modifier letter (O'Brien, O’Brien,
// Oʼbrien).
const apostrophes = "'\u2019\u02bc"

// AuthorMatches reports whether one author's name words match the filter's
// words: each filter word starts some name word.
func AuthorMatches(nameWords, filterWords []string) bool {
	for _, fw := range filterWords {
		found := false
		for _, nw := range nameWords {
			if strings.HasPrefix(nw, fw) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
