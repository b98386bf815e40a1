package papersearch

import (
	"strings"
	"testing"
)

// hostile holds each kind of character Control names, with visible text
// around it.
const hostile = "a\x00b\x07c\x1b[31md\x7fe\u0085f\u009bg\u202eh\u202ai\u2066j\u2069k\r\nl\rm"

// hasControl reports whether s holds a character a terminal or a reader's
// bidi algorithm would act on.
func hasControl(s string) bool { return strings.ContainsFunc(s, Control) }

func TestStripControls(t *testing.T) {
	for in, want := range map[string]string{
		hostile:                      "abc[31mde\nfghijk\nl\nm",
		"tab\tand\nnewline stay":     "tab\tand\nnewline stay",
		"right\u200fto\u200eleft":    "right\u200fto\u200eleft",
		"":                           "",
		"\u202eevil.exe\u202dtxt.":   "evil.exetxt.",
		"plain ASCII and ünïcödé ok": "plain ASCII and ünïcödé ok",
		"page\fbreak and\vtab":       "page break and tab",
	} {
		if got := StripControls(in); got != want {
			t.Errorf("StripControls(%q) = %q, want %q", in, got, want)
		}
	}
	for r := rune(0); r < 0x3000; r++ {
		if StripControls(string(r)) != "" && Control(r) && !strings.ContainsRune("\r\u0085\f\v", r) {
			t.Errorf("U+%04X is a control but is kept", r)
		}
	}
}

// TestCompleteRemovesControls: the one place papers are validated takes
// every control character out of every text field, keeping the rest.
func TestCompleteRemovesControls(t *testing.T) {
	p, err := Complete(Paper{ID: "ctl-1", Title: "Title " + hostile, Abstract: "Abstract " + hostile,
		Venue: "Venue " + hostile, Authors: []string{"Ada\x1b[2J Lovelace", "\u202eGrace Hopper"}})
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"title": p.Title, "abstract": p.Abstract, "venue": p.Venue, "authors": strings.Join(p.Authors, "|")} {
		if hasControl(v) {
			t.Errorf("%s keeps a control character: %q", name, v)
		}
	}
	if p.Title != "Title abc[31mde fghijk l m" || p.Authors[0] != "Ada[2J Lovelace" || p.Authors[1] != "Grace Hopper" ||
		p.Abstract != "Abstract abc[31mde\nfghijk\nl\nm" {
		t.Errorf("the visible text changed: %+v", p)
	}
	// Lengths count what is left.
	if _, err := Complete(Paper{Abstract: "x", Title: strings.Repeat("\x00", MaxTitleLength+1) + "t"}); err != nil {
		t.Errorf("a title long only in control characters: %v", err)
	}
	if _, err := Complete(Paper{Abstract: "x", Authors: []string{"\x00\xff"}}); err == nil {
		t.Error("an author of invalid UTF-8 with a control character was accepted")
	}
}
