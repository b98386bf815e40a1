package search

import (
	"fmt"
	"unicode/utf8"

	"github.com/papersearch/papersearch"
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
	case f.By != "" && f.By != papersearch.ByPublished && f.By != papersearch.ByAdded:
		return invalidField("filters/by", fmt.Sprintf("must be %s or %s", papersearch.ByPublished, papersearch.ByAdded))
	}
	for _, b := range []struct {
		name  string
		bound papersearch.Bound
	}{{"filters/since", f.Since}, {"filters/until", f.Until}} {
		if b.bound == "" {
			continue
		}
		if _, _, err := b.bound.Span(); err != nil {
			return invalidField(b.name, err.Error())
		}
	}
	return nil
}
