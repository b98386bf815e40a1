package papersearch

import (
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Source is one record a paper was read from: the id that source gives it
// ("arxiv:2401.01234", "doi:10.1145/…", "openreview:abc") and the page it
// names. A paper that arrived from several sources (the arXiv preprint, the
// conference version) keeps each.
type Source struct {
	ID  string `json:"id"`
	URL string `json:"url,omitempty"`
}

// MaxSources is the most sources a paper keeps.
const MaxSources = 16

// cleanSources sorts sources by id and keeps one entry of each id, with a
// URL if any of its entries has one; ok is false for an invalid id or URL,
// or more than MaxSources.
func cleanSources(sources []Source) (_ []Source, ok bool) {
	if len(sources) > MaxSources {
		return nil, false
	}
	out := make([]Source, 0, len(sources))
	for _, s := range sources {
		if !ValidID(s.ID) || s.URL != "" && !ValidURL(s.URL) {
			return nil, false
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, true
	}
	return mergeSources(out), true
}

// WorkKeys returns the keys that name the work p is a version of: its id,
// the id of each of its sources and, when it has one, its TitleKey. Two
// papers sharing a key are versions of one work (see Merge).
func WorkKeys(p Paper) []string {
	keys := []string{p.ID}
	for _, s := range p.Sources {
		keys = append(keys, s.ID)
	}
	if k := TitleKey(p); k != "" {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// Title keys need a title of at least minTitleWords words and minTitleLetters
// letters and digits ("Deep Learning" has a key), so that one-word and
// generic titles ("Introduction", "Reply") by authors of one surname are
// not taken for one work.
const (
	minTitleWords   = 2
	minTitleLetters = 12
)

// TitleKey is "title:" followed by p's title and its first author's
// surname, folded (accents removed, lower case, punctuation dropped):
// "title:attention is all you need/vaswani". It is "" when p has no author,
// a title derived from its abstract (ending in "…") or too short a title.
func TitleKey(p Paper) string {
	if len(p.Authors) == 0 || strings.HasSuffix(p.Title, "…") {
		return ""
	}
	title := foldWords(p.Title)
	if len(title) < minTitleWords || len(strings.Join(title, "")) < minTitleLetters {
		return ""
	}
	surname := Surname(p.Authors[0])
	if surname == "" {
		return ""
	}
	return "title:" + strings.Join(title, " ") + "/" + surname
}

// Surname is the folded surname of an author's name: the last word of the
// part before a comma ("Berg, Anna van den"), else of the whole name
// ("Anna van den Berg"); "" for a name without a word.
func Surname(name string) string {
	if before, _, ok := strings.Cut(name, ","); ok && strings.TrimSpace(before) != "" {
		name = before
	}
	words := foldWords(name)
	if len(words) == 0 {
		return ""
	}
	return words[len(words)-1]
}

// foldWords splits s into lower-case words of letters and digits, folded
// by Fold once compatibility forms are spelled plainly (the ligature "ﬁ"
// as "fi", a full-width "Ａ" as "A"): "Schrödinger's Équation" is
// [schrodinger s equation], "Jørgensen" [jorgensen], "Straße" [strasse].
func foldWords(s string) []string {
	var b strings.Builder
	for _, r := range Fold(norm.NFKC.String(s)) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		} else {
			b.WriteByte(' ')
		}
	}
	return strings.Fields(b.String())
}

// preprintVenues are the venues, folded, that name a preprint server
// rather than a publication.
var preprintVenues = []string{"arxiv", "corr", "biorxiv", "medrxiv", "ssrn", "research square", "techrxiv", "openreview"}

// Published reports whether p names the venue that published it: a venue
// that is not a preprint server (arXiv, CoRR, bioRxiv, …) or a "preprint",
// on a paper whose type is not TypePreprint.
func Published(p Paper) bool {
	if p.Type == TypePreprint {
		return false
	}
	v := strings.Join(foldWords(p.Venue), " ")
	if v == "" || strings.Contains(v, "preprint") || strings.Contains(v, "submitted") {
		return false
	}
	for _, pre := range preprintVenues {
		if strings.HasPrefix(v, pre) {
			return false
		}
	}
	return true
}

// Merge makes one paper of two versions of a work: kept, the version
// stored (whose id the work keeps), and other, a version arriving. The
// fields come from the published version when only one is (see
// Published); else from other when it is a newer record of the same id,
// else from kept, so that versions arriving from two sources in turn do
// not undo each other. A field the chosen version lacks (venue, year, URL,
// type) comes from the other. Sources and tags are the union of both, and each
// id the work was known by is one of its sources. Merging a version
// already merged changes nothing.
func Merge(kept, other Paper) Paper {
	m, rest := kept, other
	if pk, po := Published(kept), Published(other); po && !pk || po == pk && kept.ID == other.ID {
		m, rest = other, kept
	}
	m.ID = kept.ID
	if m.Venue == "" {
		m.Venue = rest.Venue
	}
	if m.Year == 0 {
		m.Year = rest.Year
	}
	if m.URL == "" {
		m.URL = rest.URL
	}
	if m.Type == "" {
		m.Type = rest.Type
	}
	sources := slices.Concat(kept.Sources, other.Sources)
	if kept.ID != other.ID {
		sources = append(sources, Source{ID: kept.ID, URL: kept.URL}, Source{ID: other.ID, URL: other.URL})
	}
	m.Sources = mergeSources(sources)
	m.Tags = mergeTags(kept.Tags, other.Tags)
	m.Date = EarlierDate(kept.Date, other.Date) // the work was out from its first version on
	m.Added = EarlierAdded(kept.Added, other.Added)
	return m
}

// mergeSources sorts valid sources by id and keeps one entry of each, with
// a URL if any of its entries has one: at most MaxSources (a work known by
// more keeps those of the first ids).
func mergeSources(sources []Source) []Source {
	slices.SortStableFunc(sources, func(a, b Source) int { return strings.Compare(a.ID, b.ID) })
	var out []Source
	for _, s := range sources {
		if n := len(out); n > 0 && out[n-1].ID == s.ID {
			if out[n-1].URL == "" {
				out[n-1].URL = s.URL
			}
			continue
		}
		out = append(out, s)
	}
	return out[:min(len(out), MaxSources)]
}

// mergeTags is the union of two lists of clean tags; it may exceed
// MaxTags, which the caller checks (CleanTags).
func mergeTags(a, b []string) []string {
	tags := slices.Concat(a, b)
	slices.Sort(tags)
	return slices.Compact(tags)
}
