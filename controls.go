package papersearch

import "strings"

// Control reports whether r steers a terminal or reorders the text a
// reader sees rather than being part of it: a C0 control other than tab
// and newline (NUL, BEL, ESC, CR …), DEL, a C1 control (U+0080–U+009F), or
// a bidirectional embedding, override or isolate (U+202A–U+202E,
// U+2066–U+2069), which can show a reader text in another order than it
// is stored. The bidirectional marks (U+200E, U+200F, U+061C) are kept:
// they only nudge neutral characters and are real in right-to-left text.
// It is the one rule of what a paper's text may not hold.
func Control(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// StripControls returns s without Control characters: a line break
// written as CR LF, a lone CR or NEL (U+0085) becomes a newline, a form
// feed or vertical tab (white space, as text taken from a PDF holds them
// between words) a space, and every other one is dropped. Complete applies it to every text field of a paper
// on its way in; the writers of text that other programs or a terminal
// read (CSV, BibTeX, the command line) apply it again, for papers stored
// before it.
func StripControls(s string) string {
	if !strings.ContainsFunc(s, Control) {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\r' || r == 0x85:
			return '\n'
		case r == '\f' || r == '\v':
			return ' '
		case Control(r):
			return -1
		}
		return r
	}, s)
}
