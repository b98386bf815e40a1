package search

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/storage"
)

// ErrInvalidQuery is wrapped by errors that describe a bad query.
var ErrInvalidQuery = errors.New("invalid query")

// ValidateText checks a free-text query, returning an error wrapping
// ErrInvalidQuery that names the field at fault.
func ValidateText(text string) error {
	switch {
	case !utf8.ValidString(text):
		return invalidField("query", "must be valid UTF-8")
	case papersearch.Blank(text):
		return invalidField("query", "must hold some text, not only spaces, control and invisible characters")
	case utf8.RuneCountInString(text) > MaxQueryLength:
		return invalidField("query", fmt.Sprintf("must be at most %d characters", MaxQueryLength))
	}
	return nil
}

// validateLimit checks a query's result limit; 0 stands for DefaultLimit.
func validateLimit(limit int) error {
	if limit < 0 || limit > MaxLimit {
		return invalidField("limit", fmt.Sprintf("must be between 1 and %d", MaxLimit))
	}
	return nil
}

// RequestedLimit is the limit a request (HTTP, MCP, the command line) asks
// for: DefaultLimit when it names none, else the one it names, which must
// be from 1 to MaxLimit (a 0 it names is refused, not taken for the
// default).
func RequestedLimit(limit *int) (int, error) {
	if limit == nil {
		return DefaultLimit, nil
	}
	if *limit == 0 {
		return 0, validateLimit(-1)
	}
	return *limit, validateLimit(*limit)
}

// invalidField is the error of a query field that breaks a rule: a
// *papersearch.FieldError wrapping ErrInvalidQuery.
func invalidField(field, reason string) error {
	return &papersearch.FieldError{Field: field, Reason: reason, Err: ErrInvalidQuery}
}

// missingField is the error of a query field naming something that does
// not exist: a *papersearch.FieldError wrapping ErrNotFound.
func missingField(field, reason string) error {
	return &papersearch.FieldError{Field: field, Reason: reason, Err: storage.ErrNotFound}
}

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

// validate checks the whole query and fills defaults.
func (q *Query) validate() error {
	if len(q.Like) > 0 && papersearch.Blank(q.Text) {
		q.Text = "" // a blank query beside examples is no query
	}
	if q.Text != "" || len(q.Like) == 0 {
		if err := ValidateText(q.Text); err != nil {
			if len(q.Like) == 0 && papersearch.Blank(q.Text) {
				return invalidField("query", "must hold some text (not only spaces, control and invisible characters) unless like names papers")
			}
			return err
		}
	}
	if err := q.validateShape(); err != nil {
		return err
	}
	for _, side := range []struct {
		field string
		ids   []string
	}{{"like", q.Like}, {"unlike", q.Unlike}} {
		if len(side.ids) > MaxExamples {
			return invalidField(side.field, fmt.Sprintf("may name at most %d papers, not %d", MaxExamples, len(side.ids)))
		}
	}
	if q.Mode == Lexical && papersearch.Blank(q.Text) {
		return invalidField("query", "must not be empty in lexical mode")
	}
	return nil
}

// validateShape checks the limit, mode and filter that searches and
// similar-paper queries share, filling the default limit and mode.
func (q *Query) validateShape() error {
	if err := validateLimit(q.Limit); err != nil {
		return err
	}
	if q.Limit == 0 {
		q.Limit = DefaultLimit
	}
	switch q.Mode {
	case "":
		q.Mode = Hybrid
	case Hybrid, Dense, Lexical:
	default:
		return invalidField("mode", "must be hybrid, dense or lexical")
	}
	return ValidateFilter(q.Filter)
}
