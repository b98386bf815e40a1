package papersearch

import (
	"fmt"
	"regexp"
)

// Filter restricts which papers a retrieval may return. It is applied
// inside each retrieval, before its top k are taken. The zero Filter allows
// every paper.
type Filter struct {
	// YearMin and YearMax bound the publication year, inclusive; 0 leaves
	// that side open.
	YearMin int `json:"year_min,omitempty" jsonschema:"the earliest publication year (inclusive)"`
	YearMax int `json:"year_max,omitempty" jsonschema:"the latest publication year (inclusive)"`
	// Venues, if not empty, lists the venues allowed (case-insensitive).
	Venues []string `json:"venues,omitempty" jsonschema:"the venues allowed (case-insensitive), such as NeurIPS"`
	// Author, if set, keeps papers with an author whose name has words
	// starting with each word of Author (case-insensitive): "hinton",
	// "geoff hin" and "g hinton" all match "Geoffrey Hinton".
	Author string `json:"author,omitempty" jsonschema:"papers with an author whose name has words starting with each of these words: geoff hin matches Geoffrey Hinton"`
	// Tags, if not empty, keeps papers holding any of these tags
	// (case-insensitive).
	Tags []string `json:"tags,omitempty" jsonschema:"papers holding any of these collections (tags; see list_collections)"`
	// Since and Until bound the papers' dates, inclusive, each a day
	// ("2026-11-01") or an RFC 3339 time; "" leaves that end open. By says
	// which date: the publication (ByPublished, the default; a paper
	// matches when any day it may have been published on is within the
	// bounds, so one known only by its year matches bounds within it, and
	// one with neither date nor year matches none) or when it was added
	// here (ByAdded).
	Since Bound  `json:"since,omitempty" jsonschema:"the earliest date (a day YYYY-MM-DD, or an RFC 3339 time), inclusive"`
	Until Bound  `json:"until,omitempty" jsonschema:"the latest date (a day YYYY-MM-DD, or an RFC 3339 time), inclusive"`
	By    DateBy `json:"by,omitempty" jsonschema:"which date since and until bound: published (the default) or added (when the paper was first stored here)"`
	// Exclude lists paper ids never returned.
	Exclude []string `json:"-"`
	// Only, if not empty, lists the only paper ids that may be returned.
	Only []string `json:"-"`
}

// NotInterestedTag is the tag marking a paper "not interested" for the
// collection tag: recommendations for the collection never return it and
// move away from it. It is the collection's tag after notInterestedPrefix.
func NotInterestedTag(tag string) string { return notInterestedPrefix + tag }

const notInterestedPrefix = "not."

// ValidCollectionTag reports whether tag, in any letter case, names a
// collection: it matches CollectionTagPattern (no not-interested mark), so
// that its mark (NotInterestedTag) is a tag too. Every tag a paper holds
// is a collection's or a collection's mark.
func ValidCollectionTag(tag string) bool { return collectionForm.MatchString(tag) }

var collectionForm = regexp.MustCompile(CollectionTagPattern) // read-only after init

// ErrBadCollectionTag is the rule ValidCollectionTag checks.
var ErrBadCollectionTag = fmt.Errorf("a collection is a tag of 1 to %d of A-Z, a-z, 0-9, '.', '_', '-' starting with a letter or digit, not with %q (in any letter case)", MaxTagLength, notInterestedPrefix)

// Limits of a filter. A year range whose start is after its end is valid
// and matches no paper.
const (
	// MaxFilterVenues bounds the venues of a filter.
	MaxFilterVenues = 100
	// MaxAuthorFilter bounds the author filter, in characters.
	MaxAuthorFilter = 200
	// MaxFilterTags bounds the tags of a filter.
	MaxFilterTags = 100
)
