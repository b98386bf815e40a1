package papersearch

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of a paper's fields, enforced on every write: the HTTP API, corpus
// files and the OpenAPI document all use these.
const (
	// MaxIDLength is the longest paper id, in characters (Unicode code points).
	MaxIDLength = 200
	// MinYear and MaxYear bound a paper's year and the year filters; a year of
	// 0 means the year is unknown.
	MinYear = 0
	MaxYear = 9999
	// MaxURLLength is the longest paper URL, in bytes.
	MaxURLLength = 2048
	// MaxTags is the most tags a paper holds; MaxTagLength the longest tag,
	// in bytes, besides the "not." of a collection's not-interested mark
	// (NotInterestedTag), so that every tag names a collection.
	MaxTags      = 32
	MaxTagLength = 64
	// MaxTitleLength, MaxAbstractLength, MaxVenueLength and
	// MaxAuthorLength bound those fields, in characters (Unicode code
	// points) as given; MaxAuthors bounds the author list. The longest of
	// 29,100 real ML abstracts has 16,262 characters.
	MaxTitleLength    = 1000
	MaxAbstractLength = 50000
	MaxVenueLength    = 500
	MaxAuthors        = 5000
	MaxAuthorLength   = 500
)

// Errors a paper can be refused with; a FieldError wraps one of them.
var (
	ErrNoAbstract  = errors.New("abstract is empty: it must hold text other than white space")
	ErrInvalidUTF8 = errors.New("text is not valid UTF-8")
	ErrBadID       = fmt.Errorf("id must be 1 to %d characters without control or invisible format characters", MaxIDLength)
	ErrBadYear     = fmt.Errorf("year must be between %d and %d (0: unknown)", MinYear, MaxYear)
	ErrBadURL      = fmt.Errorf("url must be an absolute http or https URL of at most %d bytes in printable ASCII: spaces and other characters percent-encoded (a space as %%20)", MaxURLLength)
	ErrBadSources  = fmt.Errorf("sources must be at most %d, each with an id of 1 to %d characters without control or invisible format characters and an optional http or https url", MaxSources, MaxIDLength)
	ErrTooLong     = errors.New("text is longer than the field allows")
	ErrBadTag      = fmt.Errorf("tags must be at most %d, each 1 to %d of A-Z, a-z, 0-9, '.', '_', '-' starting with a letter or digit, or not. before such a tag (a collection's not-interested mark); stored in lower case", MaxTags, MaxTagLength)
)

// FieldError is the one error type naming the field of an input that
// breaks a rule: a paper's (Complete), a query's (package search), an
// import request's (package imports). Field is its path in the request,
// parts joined by "/" ("year", "filters/year_min", "like/2"); Err is the
// rule broken (one of the errors above, search.ErrInvalidQuery,
// storage.ErrNotFound, …), which errors.Is finds; Reason, if set, says what
// the field must be ("must be between 1 and 100"), and the message is
// then the field and its reason, else Err's.
type FieldError struct {
	Field  string
	Err    error
	Reason string
}

func (e *FieldError) Error() string {
	if e.Reason != "" {
		return e.Field + " " + e.Reason
	}
	return e.Err.Error()
}
func (e *FieldError) Unwrap() error { return e.Err }

// Complete validates a paper and fills what a corpus may leave out:
// control characters are removed from its text (StripControls), white
// space is tidied, empty author names are dropped, a missing id is derived
// from the abstract and a missing title from its first sentence. It is the
// one check every paper passes before it is stored; the error is a
// *FieldError naming the first invalid field. The id and url are checked as
// given, before any tidying, so the rule is the one the OpenAPI document
// states.
func Complete(p Paper) (Paper, error) {
	for _, f := range []struct{ name, value string }{
		{"id", p.ID}, {"title", p.Title}, {"abstract", p.Abstract}, {"venue", p.Venue}, {"url", p.URL},
	} {
		if !utf8.ValidString(f.value) {
			return p, &FieldError{Field: f.name, Err: ErrInvalidUTF8}
		}
	}
	// Control characters go first, so lengths count what a reader sees.
	p.Title, p.Abstract, p.Venue = StripControls(p.Title), StripControls(p.Abstract), StripControls(p.Venue)
	if slices.ContainsFunc(p.Authors, func(a string) bool { return strings.ContainsFunc(a, Control) }) {
		authors := make([]string, len(p.Authors))
		for i, a := range p.Authors {
			if authors[i] = a; utf8.ValidString(a) { // an invalid one is refused below
				authors[i] = StripControls(a)
			}
		}
		p.Authors = authors
	}
	for _, f := range []struct {
		name, value string
		max         int
	}{
		{"title", p.Title, MaxTitleLength}, {"abstract", p.Abstract, MaxAbstractLength}, {"venue", p.Venue, MaxVenueLength},
	} {
		if utf8.RuneCountInString(f.value) > f.max {
			return p, &FieldError{Field: f.name, Err: fmt.Errorf("%w: %s may hold at most %d characters", ErrTooLong, f.name, f.max)}
		}
	}
	if len(p.Authors) > MaxAuthors {
		return p, &FieldError{Field: "authors", Err: fmt.Errorf("%w: at most %d authors", ErrTooLong, MaxAuthors)}
	}
	for _, a := range p.Authors {
		if !utf8.ValidString(a) {
			return p, &FieldError{Field: "authors", Err: ErrInvalidUTF8}
		}
		if utf8.RuneCountInString(a) > MaxAuthorLength {
			return p, &FieldError{Field: "authors", Err: fmt.Errorf("%w: an author's name may hold at most %d characters", ErrTooLong, MaxAuthorLength)}
		}
	}
	if p.ID != "" && !ValidID(p.ID) {
		return p, &FieldError{Field: "id", Err: ErrBadID}
	}
	if p.URL != "" && !ValidURL(p.URL) {
		return p, &FieldError{Field: "url", Err: ErrBadURL}
	}
	if p.Year < MinYear || p.Year > MaxYear {
		return p, &FieldError{Field: "year", Err: ErrBadYear}
	}
	if !ValidType(p.Type) {
		return p, &FieldError{Field: "type", Err: ErrBadType}
	}
	if p.Date != "" {
		first, _, ok := ParseDate(p.Date)
		if !ok {
			return p, &FieldError{Field: "date", Err: ErrBadDate}
		}
		if p.Year == 0 {
			p.Year = first.Year()
		}
	}
	tags, ok := CleanTags(p.Tags)
	if !ok {
		return p, &FieldError{Field: "tags", Err: ErrBadTag}
	}
	p.Tags = tags
	sources, ok := cleanSources(p.Sources)
	if !ok {
		return p, &FieldError{Field: "sources", Err: ErrBadSources}
	}
	p.Sources = sources
	p.ID = CanonicalID(strings.TrimSpace(p.ID))
	p.Title = strings.Join(strings.Fields(p.Title), " ")
	p.Abstract = strings.TrimSpace(p.Abstract)
	p.Venue = strings.TrimSpace(p.Venue)
	p.Authors = CleanNames(p.Authors)
	if Blank(p.Abstract) {
		return p, &FieldError{Field: "abstract", Err: ErrNoAbstract}
	}
	if p.ID == "" {
		p.ID = DeriveID(p.Abstract)
	}
	if Blank(p.Title) {
		p.Title = DeriveTitle(p.Abstract)
	}
	return p, nil
}

// Blank reports whether s shows a reader nothing: it holds no character
// but white space, Control characters and invisible format characters
// (Unicode's category Cf: zero-width spaces and joiners, the soft hyphen,
// U+FEFF). An abstract that is blank is none; a title that is blank is
// derived from the abstract.
func Blank(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool {
		return !unicode.IsSpace(r) && r >= 0x20 && !Control(r) && !unicode.Is(unicode.Cf, r)
	})
}

// CanonicalID is the form of id that papers are stored and looked up
// under: a DOI id (doi:…, any case) in lower case, as DOIs are
// case-insensitive (and as every reader stores them); any other id as it
// is.
func CanonicalID(id string) string {
	if _, ok := CutDOI(id); ok {
		return strings.ToLower(id)
	}
	return id
}

// CutDOI returns the DOI a DOI id (doi:…, the prefix in any case) names,
// and whether id is one.
func CutDOI(id string) (doi string, ok bool) {
	if len(id) > 4 && strings.EqualFold(id[:4], "doi:") {
		return id[4:], true
	}
	return "", false
}

// ValidID reports whether id can name a paper: 1 to MaxIDLength characters
// of valid UTF-8, none of them a control character (below U+0020, and
// every one Control names) or an invisible format character (Unicode's
// category Cf: zero-width spaces and joiners, the soft hyphen, U+FEFF,
// tags), which would let "ab\u202ecd" or "ab\u200bcd" pass for another id.
func ValidID(id string) bool {
	if id == "" || !utf8.ValidString(id) || utf8.RuneCountInString(id) > MaxIDLength {
		return false
	}
	return !strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || Control(r) || unicode.Is(unicode.Cf, r) })
}

// URLPattern is the form of a paper's URL, as a regular expression that Go
// and JSON Schema read alike: an absolute http or https URL of printable
// ASCII (non-ASCII characters percent-encoded) with a host name or address.
// No javascript:, data: or relative link can be stored, and so none can
// reach a page.
const URLPattern = `^[Hh][Tt][Tt][Pp][Ss]?://[A-Za-z0-9.-]+(:[0-9]{1,5})?([/?#][!-~]*)?$`

var urlForm = regexp.MustCompile(URLPattern) // read-only after init

// ValidURL reports whether u is a URL a paper may carry: it matches
// URLPattern and is at most MaxURLLength bytes.
func ValidURL(u string) bool { return len(u) <= MaxURLLength && urlForm.MatchString(u) }

// URIForm writes a URL as RFC 3986 has it: the printable characters it
// does not allow in a URI (space " < > \ ^ ` { | }), which ValidURL
// lets through as browsers take them, percent-encoded; it names the same
// resource. Output that other programs parse as a URI (an Atom link, a
// BibTeX url) holds this form.
func URIForm(u string) string { return uriEscapes.Replace(u) }

var uriEscapes = strings.NewReplacer(" ", "%20", `"`, "%22", "<", "%3C", ">", "%3E", `\`, "%5C", "^", "%5E", "`", "%60",
	"{", "%7B", "|", "%7C", "}", "%7D") // read-only

// CleanNames tidies a list of author names: white space collapsed, empty
// names dropped; nil when none is left.
func CleanNames(names []string) []string {
	var out []string
	for _, n := range names {
		if n = strings.Join(strings.Fields(n), " "); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// collectionTag is a collection's tag inside a pattern: 1 to
// MaxTagLength (64) of A-Z, a-z, 0-9, '.', '_', '-' starting with a letter
// or digit and not with "not." in any case (a not-interested mark's
// prefix), which is spelled out by its first four characters since
// neither Go's regular expressions nor every JSON Schema validator's have
// lookahead.
const collectionTag = `(?:[A-Za-z0-9][A-Za-z0-9._-]{0,2}` + // 1 to 3
	`|(?:[A-MO-Za-mo-z0-9][A-Za-z0-9._-]{3}` + // 4 to 64, first four not "not."
	`|[Nn](?:[A-NP-Za-np-z0-9._-][A-Za-z0-9._-]{2}` +
	`|[Oo](?:[A-SU-Za-su-z0-9._-][A-Za-z0-9._-]` +
	`|[Tt][A-Za-z0-9_-])))[A-Za-z0-9._-]{0,60})`

// CollectionTagPattern is the form of a collection's tag (see
// ValidCollectionTag) as a regular expression Go and JSON Schema read
// alike.
const CollectionTagPattern = `^` + collectionTag + `$`

// TagPattern is the form of a tag as given, as a regular expression that
// Go and JSON Schema read alike: a collection's tag (CollectionTagPattern),
// with "not." (any case) before it in the collection's not-interested
// mark; so every tag names a collection or marks one. Tags are stored in
// lower case.
const TagPattern = `^(?:[Nn][Oo][Tt]\.)?` + collectionTag + `$`

var tagForm = regexp.MustCompile(TagPattern) // read-only after init

// CleanTags folds tags to lower case, sorts them and drops repeats; nil
// when none is left. ok is false when a tag does not match TagPattern, or
// more than MaxTags are given.
func CleanTags(tags []string) (_ []string, ok bool) {
	if len(tags) > MaxTags {
		return nil, false
	}
	var out []string
	for _, t := range tags {
		if !tagForm.MatchString(t) {
			return nil, false
		}
		out = append(out, strings.ToLower(t))
	}
	slices.Sort(out)
	return slices.Compact(out), true
}

// MergeTags returns a stored paper's tags with add's: CleanTags of the
// two together, except that only add's are checked against TagPattern
// (a stored tag stays whatever its form: an earlier version's rule may
// have taken it, and refusing it would leave the paper impossible to
// retag). ok is false when an added tag does not match, or together they
// are more than MaxTags.
func MergeTags(stored, add []string) (_ []string, ok bool) {
	add, ok = CleanTags(add)
	if !ok {
		return nil, false
	}
	out := slices.Clone(add)
	for _, t := range stored {
		out = append(out, strings.ToLower(t))
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > MaxTags {
		return nil, false
	}
	if len(out) == 0 {
		return nil, true
	}
	return out, true
}
