package papersearch

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Paper is one research paper as the service stores and returns it.
type Paper struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Abstract string   `json:"abstract"`
	Authors  []string `json:"authors"`
	Venue    string   `json:"venue,omitempty"`
	Year     int      `json:"year,omitempty"`
	URL      string   `json:"url,omitempty"`
	// Type is the kind of publication the paper's record says it is, one
	// of Types ("journal-article", "preprint", …), or "" when it does not.
	Type string `json:"type,omitempty"`
	// Tags name the collections the paper belongs to ("neurips-2026",
	// "my-library"): lower-case, sorted, each once (see CleanTags). Search,
	// similar and exports can keep the papers holding any of a list.
	Tags []string `json:"tags,omitempty"`
	// Sources are the records the paper was read from, by id ("arxiv:…",
	// "doi:…", "openreview:…"), sorted: the preprint and the published
	// version of a work are one paper holding both (see Merge).
	Sources []Source `json:"sources,omitempty"`
	// Date is the day the paper's record says it was published (a
	// preprint: first posted), "2026-11-03", or "2026-11" where it names
	// only the month; "" where it says neither (Year may still say the
	// year). See DatePattern.
	Date string `json:"date,omitempty"`
	// Added is when this service first stored the paper (UTC); it is
	// kept when the paper is updated or merged with another version, and
	// set by the store, whatever a request says.
	Added time.Time `json:"added,omitzero"`
}

// Text is the text a paper is embedded and indexed from: its title followed
// by its abstract. A title that only repeats the abstract's opening (a
// derived display title) is not repeated.
func (p Paper) Text() string {
	title := strings.TrimSpace(strings.TrimSuffix(p.Title, "…"))
	abstract := strings.TrimSpace(p.Abstract)
	if title == "" {
		return abstract
	}
	// Only the abstract's opening can repeat the title; normalise no more.
	head := abstract
	if n := 2*len(title) + 16; len(head) > n {
		for n > 0 && !utf8.RuneStart(head[n]) {
			n--
		}
		head = head[:n]
	}
	if strings.HasPrefix(Normalize(head), Normalize(title)) {
		return abstract
	}
	return title + ".\n" + abstract
}

// Normalize folds text to the form used for identity: Unicode NFKC,
// lower case, and runs of white space collapsed to one space.
func Normalize(s string) string {
	s = norm.NFKC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// DeriveID returns the id given to a paper that arrives without one: 16 hex
// digits of the SHA-256 of its normalised abstract. It depends on nothing but
// the abstract, so it does not change when other papers are added or reordered.
func DeriveID(abstract string) string {
	sum := sha256.Sum256([]byte(Normalize(abstract)))
	return hex.EncodeToString(sum[:8])
}

// maxTitleRunes bounds a derived display title, in runes, before the ellipsis.
const maxTitleRunes = 96

// DeriveTitle returns a display title for a paper that has none: the first
// sentence of its abstract with Markdown and LaTeX markup removed, cut at a
// word boundary after at most 96 characters and ended with "…" when cut.
func DeriveTitle(abstract string) string {
	s := stripMarkup(abstract)
	if strings.TrimSpace(s) == "" {
		s = abstract // nothing but markup: keep it as written
	}
	if i := sentenceEnd(s); i > 0 {
		s = s[:i]
	}
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= maxTitleRunes {
		if t := strings.TrimRight(s, "."); t != "" {
			return t
		}
		return s
	}
	return Shorten(s, maxTitleRunes+1)
}

// Shorten returns s whole when it has at most n characters (runes), else
// its first n-1 at most, cut at the last space among them (or just after
// them) when that keeps more than half, trailing punctuation dropped, and
// "…": n characters at most. It is how a text is cut for display
// everywhere (a derived title, an MCP result's abstract, the command
// line's titles).
func Shorten(s string, n int) string {
	r := []rune(s)
	switch {
	case len(r) <= n:
		return s
	case n < 2:
		return "…"[:3*max(n, 0)]
	}
	cut := n - 1
	for i := n - 1; i > (n-1)/2; i-- {
		if r[i] == ' ' {
			cut = i
			break
		}
	}
	return strings.TrimRight(string(r[:cut]), " ,;:-—") + "…"
}

// Sentences cuts text after each full stop, question or exclamation mark
// followed by white space (not in "e.g." or "i.e."), trimming each piece.
func Sentences(text string) []string {
	var out []string
	for text = strings.TrimSpace(text); text != ""; {
		i := sentenceEnd(text)
		if i < 0 {
			i = len(text)
		}
		out = append(out, strings.TrimSpace(text[:i]))
		text = strings.TrimSpace(text[i:])
	}
	return out
}

// sentenceEnd returns the byte offset just past the first sentence's full
// stop, question or exclamation mark (one followed by white space), or -1.
func sentenceEnd(s string) int {
	for i := 0; i+1 < len(s); i++ {
		switch s[i] {
		case '.', '?', '!':
			if s[i+1] == ' ' || s[i+1] == '\n' {
				// Skip common abbreviations such as "e.g." and "i.e.".
				if i >= 3 && (s[i-3:i+1] == "e.g." || s[i-3:i+1] == "i.e.") {
					continue
				}
				return i + 1
			}
		}
	}
	return -1
}

// stripMarkup removes the Markdown emphasis and inline LaTeX that abstracts
// carry: "$\textbf{UniCon3R}$" becomes "UniCon3R", "**This**" becomes "This".
func stripMarkup(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '*' || c == '$' || c == '{' || c == '}':
			continue
		case c == '_' && (i == 0 || s[i-1] == ' ' || i+1 == len(s) || s[i+1] == ' '):
			continue
		case c == '\\':
			j := i + 1
			for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
				j++
			}
			i = j - 1
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
