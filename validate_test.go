package papersearch

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestComplete(t *testing.T) {
	tests := []struct {
		name  string
		p     Paper
		field string // "" when valid
		err   error
	}{
		{"minimal", Paper{Abstract: "We study graphs."}, "", nil},
		{"year bounds", Paper{Abstract: "a", Year: MaxYear}, "", nil},
		{"year below", Paper{Abstract: "a", Year: -1}, "year", ErrBadYear},
		{"year above", Paper{Abstract: "a", Year: 10000}, "year", ErrBadYear},
		{"year far above", Paper{Abstract: "a", Year: 99999999}, "year", ErrBadYear},
		{"https", Paper{Abstract: "a", URL: "https://openreview.net/forum?id=x"}, "", nil},
		{"http with port, upper-case scheme", Paper{Abstract: "a", URL: "HTTP://127.0.0.1:8080/p%C3%BC?q=1#s"}, "", nil},
		{"surrounding spaces", Paper{Abstract: "a", URL: " https://openreview.net/ "}, "url", ErrBadURL},
		{"trailing newline", Paper{Abstract: "a", URL: "https://openreview.net/\n"}, "url", ErrBadURL},
		{"non-ASCII path", Paper{Abstract: "a", URL: "https://example.org/ü"}, "url", ErrBadURL},
		{"id with surrounding spaces is kept trimmed", Paper{ID: " x1 ", Abstract: "a"}, "", nil},
		{"id of 200 characters and a space", Paper{ID: strings.Repeat("a", MaxIDLength) + " ", Abstract: "a"}, "id", ErrBadID},
		{"javascript", Paper{Abstract: "a", URL: "javascript:alert(document.domain)"}, "url", ErrBadURL},
		{"JavaScript", Paper{Abstract: "a", URL: "JAVASCRIPT:alert(1)"}, "url", ErrBadURL},
		{"data", Paper{Abstract: "a", URL: "data:text/html;base64,PHNjcmlwdD4="}, "url", ErrBadURL},
		{"vbscript", Paper{Abstract: "a", URL: "vbscript:msgbox"}, "url", ErrBadURL},
		{"relative", Paper{Abstract: "a", URL: "paper.pdf"}, "url", ErrBadURL},
		{"scheme-relative", Paper{Abstract: "a", URL: "//example.org/x"}, "url", ErrBadURL},
		{"no host", Paper{Abstract: "a", URL: "https:///x"}, "url", ErrBadURL},
		{"control character", Paper{Abstract: "a", URL: "https://exa\nmple.org"}, "url", ErrBadURL},
		{"too long", Paper{Abstract: "a", URL: "https://example.org/" + strings.Repeat("a", MaxURLLength)}, "url", ErrBadURL},
		{"blank abstract", Paper{Abstract: " \t\n"}, "abstract", ErrNoAbstract},
		{"abstract of the longest length", Paper{Abstract: strings.Repeat("ü", MaxAbstractLength)}, "", nil},
		{"abstract too long", Paper{Abstract: strings.Repeat("a", MaxAbstractLength+1)}, "abstract", ErrTooLong},
		{"title too long", Paper{Abstract: "a", Title: strings.Repeat("a", MaxTitleLength+1)}, "title", ErrTooLong},
		{"venue too long", Paper{Abstract: "a", Venue: strings.Repeat("a", MaxVenueLength+1)}, "venue", ErrTooLong},
		{"too many authors", Paper{Abstract: "a", Authors: make([]string, MaxAuthors+1)}, "authors", ErrTooLong},
		{"author too long", Paper{Abstract: "a", Authors: []string{strings.Repeat("a", MaxAuthorLength+1)}}, "authors", ErrTooLong},
		{"id of 200 characters", Paper{ID: strings.Repeat("ü", MaxIDLength), Abstract: "a"}, "", nil},
		{"id of 201 characters", Paper{ID: strings.Repeat("a", MaxIDLength+1), Abstract: "a"}, "id", ErrBadID},
		{"id with a control character", Paper{ID: "a\x01b", Abstract: "a"}, "id", ErrBadID},
		{"invalid UTF-8 title", Paper{Title: "caf\xe9", Abstract: "a"}, "title", ErrInvalidUTF8},
		{"invalid UTF-8 author", Paper{Authors: []string{"caf\xe9"}, Abstract: "a"}, "authors", ErrInvalidUTF8},
		{"tags", Paper{Abstract: "a", Tags: []string{"NeurIPS-2026", "my_library", "v1.2"}}, "", nil},
		{"tag with surrounding space", Paper{Abstract: "a", Tags: []string{" my_library"}}, "tags", ErrBadTag},
		{"tag with a space", Paper{Abstract: "a", Tags: []string{"my library"}}, "tags", ErrBadTag},
		{"empty tag", Paper{Abstract: "a", Tags: []string{""}}, "tags", ErrBadTag},
		{"tag starting with a dash", Paper{Abstract: "a", Tags: []string{"-x"}}, "tags", ErrBadTag},
		{"tag too long", Paper{Abstract: "a", Tags: []string{strings.Repeat("a", MaxTagLength+1)}}, "tags", ErrBadTag},
		{"longest tag, and its mark", Paper{Abstract: "a", Tags: []string{strings.Repeat("a", MaxTagLength), NotInterestedTag(strings.Repeat("a", MaxTagLength))}}, "", nil},
		{"mark of a tag too long", Paper{Abstract: "a", Tags: []string{NotInterestedTag(strings.Repeat("a", MaxTagLength+1))}}, "tags", ErrBadTag},
		{"mark of no collection", Paper{Abstract: "a", Tags: []string{"not.-x"}}, "tags", ErrBadTag},
		{"mark of a mark", Paper{Abstract: "a", Tags: []string{"Not.not.x"}}, "tags", ErrBadTag},
		{"bare prefix", Paper{Abstract: "a", Tags: []string{"not."}}, "tags", ErrBadTag},
		{"a word that begins as the prefix", Paper{Abstract: "a", Tags: []string{"notes", "not"}}, "", nil},
		{"mark in capitals", Paper{Abstract: "a", Tags: []string{"NOT." + strings.Repeat("a", MaxTagLength)}}, "", nil},
		{"as many tags as allowed", Paper{Abstract: "a", Tags: manyTags(MaxTags)}, "", nil},
		{"too many tags", Paper{Abstract: "a", Tags: manyTags(MaxTags + 1)}, "tags", ErrBadTag},
	}
	for _, tt := range tests {
		got, err := Complete(tt.p)
		if tt.field == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			} else if got.ID == "" || got.Title == "" || got.URL != strings.TrimSpace(tt.p.URL) {
				t.Errorf("%s: not completed: %+v", tt.name, got)
			}
			continue
		}
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field || !errors.Is(err, tt.err) {
			t.Errorf("%s: err %v, want %v on %s", tt.name, err, tt.err, tt.field)
		}
	}
	if got, _ := Complete(Paper{Abstract: "a", Tags: []string{"b", "A", "a", "B"}}); strings.Join(got.Tags, ",") != "a,b" {
		t.Errorf("tags not folded, sorted and made unique: %q", got.Tags)
	}
	if got, _ := Complete(Paper{Abstract: "a", Authors: []string{" Ada  Lovelace ", "", "  "}}); len(got.Authors) != 1 || got.Authors[0] != "Ada Lovelace" {
		t.Errorf("authors not cleaned: %q", got.Authors)
	}
}

// manyTags returns n distinct tags.
func manyTags(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("t%d", i)
	}
	return out
}

// TestValidIDRefusesInvisibleCharacters: an id may hold any visible
// character, but no control character and no invisible format character,
// each of which lets one id pass for another ("ab\u202ecd" shows as
// "abdc", "ab\u200bcd" as "abcd").
func TestValidIDRefusesInvisibleCharacters(t *testing.T) {
	for _, id := range []string{"arxiv:1706.03762", "doi:10.1109/jproc.2021.3058954", "bibtex:Erdős1959", "東京 2024", "a-b_c.d~e"} {
		if !ValidID(id) {
			t.Errorf("%q refused", id)
		}
	}
	for _, id := range []string{"ab\u202ecd", "ab\u2066cd", "ab\u200bcd", "\u200b", "ab\u00adcd", "\ufeffab", "ab\u0085cd", "a\tb", "a\nb", "ab\U000e0041"} {
		if ValidID(id) {
			t.Errorf("%q taken", id)
		}
	}
}

// TestBlankAbstractRefused: an abstract of nothing a reader sees (white
// space, zero-width spaces, a soft hyphen, U+FEFF) is no abstract; a title
// of them is derived from the abstract.
func TestBlankAbstractRefused(t *testing.T) {
	for _, abstract := range []string{"\u200b \u00a0", "\ufeff\u00ad\u2060", " \u200d\t"} {
		if _, err := Complete(Paper{ID: "x", Title: "T", Abstract: abstract}); !errors.Is(err, ErrNoAbstract) {
			t.Errorf("abstract %q: %v, want ErrNoAbstract", abstract, err)
		}
	}
	p, err := Complete(Paper{ID: "x", Title: "\u200b", Abstract: "Graphs are everywhere. We study them."})
	if err != nil || p.Title != "Graphs are everywhere" {
		t.Errorf("a blank title: %q, %v; want the abstract's first sentence", p.Title, err)
	}
	if Blank("a\u200b") || Blank("東") || !Blank("") {
		t.Error("Blank misjudges visible text or the empty string")
	}
}

// TestURIForm: every printable character RFC 3986 leaves out of a URI is
// percent-encoded, the rest kept, so the result parses as the same URL.
func TestURIForm(t *testing.T) {
	u := "https://example.org/a b/{x}|y\\z^`\"<>?q=%41&r=[1]#f"
	got := URIForm(u)
	if want := "https://example.org/a%20b/%7Bx%7D%7Cy%5Cz%5E%60%22%3C%3E?q=%41&r=[1]#f"; got != want {
		t.Errorf("URIForm(%q) = %q, want %q", u, got, want)
	}
	if strings.ContainsAny(got, " \"<>\\^`{|}") || !ValidURL(got) {
		t.Errorf("%q still holds a character a URI may not, or is no longer valid", got)
	}
}
