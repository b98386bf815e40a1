package search

import (
	"errors"
	"fmt"
	"strings"
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
	case strings.TrimSpace(text) == "":
		return invalidField("query", "must not be empty")
	case utf8.RuneCountInString(text) > MaxQueryLength:
		return invalidField("query", fmt.Sprintf("must be at most %d characters", MaxQueryLength))
	}
	return nil
}

// ValidateLimit checks a query's result limit; 0 stands for DefaultLimit.
func ValidateLimit(limit int) error {
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
		return 0, ValidateLimit(-1)
	}
	return *limit, ValidateLimit(*limit)
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
