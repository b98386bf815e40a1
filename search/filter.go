package search

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/papersearch/papersearch"
)

// Filter restricts which papers a retrieval may return. It is applied
// inside each retrieval, before its top k are taken. The zero Filter allows
// every paper.
type Filter struct {
	// YearMin and YearMax bound the publication year, inclusive; 0 leaves
	// that side open.
	YearMin int `json:"year_min,omitempty"`
	YearMax int `json:"year_max,omitempty"`
	// Venues, if not empty, lists the venues allowed (case-insensitive).
	Venues []string `json:"venues,omitempty"`
	// Author, if set, keeps papers with an author whose name has words
	// starting with each word of Author (case-insensitive): "hinton",
	// "geoff hin" and "g hinton" all match "Geoffrey Hinton".
	Author string `json:"author,omitempty"`
	// Exclude lists paper ids never returned.
	Exclude []string `json:"-"`
}

// Limits of a filter. A year range whose start is after its end is valid
// and matches no paper.
const (
	// MaxFilterVenues bounds the venues of a filter.
	MaxFilterVenues = 100
	// MaxAuthorFilter bounds the author filter, in characters.
	MaxAuthorFilter = 200
)

func yearReason() string {
	return fmt.Sprintf("must be a year between %d and %d", papersearch.MinYear, papersearch.MaxYear)
}

// Validate checks the filter, naming the field at fault.
func (f Filter) Validate() error {
	switch {
	case f.YearMin < papersearch.MinYear || f.YearMin > papersearch.MaxYear:
		return &FieldError{Field: "filters/year_min", Reason: yearReason()}
	case f.YearMax < papersearch.MinYear || f.YearMax > papersearch.MaxYear:
		return &FieldError{Field: "filters/year_max", Reason: yearReason()}
	case len(f.Venues) > MaxFilterVenues:
		return &FieldError{Field: "filters/venues", Reason: fmt.Sprintf("must list at most %d venues", MaxFilterVenues)}
	case utf8.RuneCountInString(f.Author) > MaxAuthorFilter:
		return &FieldError{Field: "filters/author", Reason: fmt.Sprintf("must be at most %d characters", MaxAuthorFilter)}
	}
	return nil
}

// venueKey is the form in which venues are compared, stored and filtered:
// case-insensitive, surrounding space ignored.
func venueKey(venue string) string { return strings.ToLower(strings.TrimSpace(venue)) }

// empty reports whether the filter allows every paper.
func (f Filter) empty() bool {
	return f.YearMin == 0 && f.YearMax == 0 && len(f.Venues) == 0 && strings.TrimSpace(f.Author) == "" && len(f.Exclude) == 0
}

// withoutExclude is f with no excluded ids.
func (f Filter) withoutExclude() Filter {
	f.Exclude = nil
	return f
}

// authorWords splits an author filter or name into lower-case words.
func authorWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !isWordRune(r) })
}

// authorMatches reports whether one author's name words match the filter's
// words: each filter word starts some name word.
func authorMatches(nameWords, filterWords []string) bool {
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
