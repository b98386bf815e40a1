package papersearch

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDeriveID(t *testing.T) {
	a := DeriveID("We study  Graph\nNetworks.")
	if len(a) != 16 {
		t.Fatalf("id %q is not 16 hex digits", a)
	}
	if b := DeriveID("  we study graph networks. "); b != a {
		t.Errorf("case and spacing changed the id: %s vs %s", a, b)
	}
	if c := DeriveID("We study graph networks!"); c == a {
		t.Error("a different abstract got the same id")
	}
	// NFKC: the ligature "ﬁ" and "fi" are the same text.
	if DeriveID("ﬁne tuning") != DeriveID("fine tuning") {
		t.Error("compatibility forms changed the id")
	}
}

func TestText(t *testing.T) {
	tests := []struct {
		p    Paper
		want string
	}{
		{Paper{Title: "Graph nets", Abstract: "We study graphs."}, "Graph nets.\nWe study graphs."},
		{Paper{Abstract: "We study graphs."}, "We study graphs."},
		// A derived title repeats the abstract's opening and is not repeated.
		{Paper{Title: "We study graphs", Abstract: "We study graphs. More."}, "We study graphs. More."},
		{Paper{Title: "We study graphs of…", Abstract: "We study graphs of many kinds."}, "We study graphs of many kinds."},
	}
	for _, tt := range tests {
		if got := tt.p.Text(); got != tt.want {
			t.Errorf("Text(%+v) = %q, want %q", tt.p, got, tt.want)
		}
	}
}

func TestDeriveTitleOfMarkupOnly(t *testing.T) {
	for _, abstract := range []string{"$", "**", "$\\alpha$", ".", "...", "$ ."} {
		if got := DeriveTitle(abstract); got == "" {
			t.Errorf("DeriveTitle(%q) is empty", abstract)
		}
	}
}

func TestSentences(t *testing.T) {
	got := Sentences("  First one, e.g. this. Second?  Third! Last without end")
	want := []string{"First one, e.g. this.", "Second?", "Third!", "Last without end"}
	if len(got) != len(want) {
		t.Fatalf("Sentences = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("sentence %d = %q, want %q", i, got[i], want[i])
		}
	}
	if Sentences("   ") != nil {
		t.Error("blank text has sentences")
	}
}

// TestShorten: a text is cut to n characters at most, at a space when one
// keeps more than half, its trailing punctuation dropped; shorter ones stay
// whole.
func TestShorten(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly ten", 11, "exactly ten"},
		{"the quick brown fox jumps", 12, "the quick…"},
		{"the quick, brown fox", 12, "the quick…"},
		{"Quokka" + strings.Repeat("x", 40), 10, "Quokkaxxx…"},
		{"北京大学的研究人员发现", 5, "北京大学…"},
		{"anything", 1, "…"},
		{"anything", 0, ""},
	} {
		got := Shorten(tt.in, tt.n)
		if got != tt.want || utf8.RuneCountInString(got) > max(tt.n, 0) {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
