package search

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/lexical"
)

func yearReason() string {
	return fmt.Sprintf("must be a year between %d and %d", papersearch.MinYear, papersearch.MaxYear)
}

// ValidateFilter checks a query's filter, returning an error wrapping
// ErrInvalidQuery that names the field at fault.
func ValidateFilter(f papersearch.Filter) error {
	switch {
	case f.YearMin < papersearch.MinYear || f.YearMin > papersearch.MaxYear:
		return invalidField("filters/year_min", yearReason())
	case f.YearMax < papersearch.MinYear || f.YearMax > papersearch.MaxYear:
		return invalidField("filters/year_max", yearReason())
	case len(f.Venues) > papersearch.MaxFilterVenues:
		return invalidField("filters/venues", fmt.Sprintf("must list at most %d venues", papersearch.MaxFilterVenues))
	case utf8.RuneCountInString(f.Author) > papersearch.MaxAuthorFilter:
		return invalidField("filters/author", fmt.Sprintf("must be at most %d characters", papersearch.MaxAuthorFilter))
	case len(f.Tags) > papersearch.MaxFilterTags:
		return invalidField("filters/tags", fmt.Sprintf("must list at most %d tags", papersearch.MaxFilterTags))
	}
	return nil
}

// VenueKey is the form in which venues are compared, stored and filtered:
// case-insensitive, surrounding space ignored.
func VenueKey(venue string) string { return strings.ToLower(strings.TrimSpace(venue)) }

// FieldsFree reports whether f tests no field of a paper (year, venue,
// author, tags): it allows every paper but those it excludes by id.
func FieldsFree(f papersearch.Filter) bool {
	return f.YearMin == 0 && f.YearMax == 0 && len(f.Venues) == 0 && strings.TrimSpace(f.Author) == "" && len(f.Tags) == 0
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
