package papersearch

import (
	"strings"
	"unicode"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Fold removes diacritics from s, as a reader who types without them
// expects: "Schölkopf" is "Scholkopf", "naïve" is "naive", "Erdős" is
// "Erdos". Letters are decomposed (NFD), their combining marks dropped, and
// the letters that carry their mark inside them (ø, ł, đ, ß, æ, œ, þ, ı)
// spelled in ASCII; case is kept. It is the one fold of the project: the
// lexical analyser, the author filter, BibTeX keys and work keys
// (TitleKey) use it.
func Fold(s string) string {
	if isASCII(s) {
		return s
	}
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), runes.Map(foldLetter), norm.NFC)
	out, _, err := transform.String(t, s)
	if err != nil {
		return s
	}
	return strings.NewReplacer("ß", "ss", "ẞ", "SS", "æ", "ae", "Æ", "AE", "œ", "oe", "Œ", "OE", "þ", "th", "Þ", "Th").Replace(out)
}

// foldLetter maps the letters whose mark no decomposition removes.
func foldLetter(r rune) rune {
	switch r {
	case 'ø':
		return 'o'
	case 'Ø':
		return 'O'
	case 'ł':
		return 'l'
	case 'Ł':
		return 'L'
	case 'đ', 'ð':
		return 'd'
	case 'Đ', 'Ð':
		return 'D'
	case 'ı':
		return 'i'
	case 'ħ':
		return 'h'
	case 'Ħ':
		return 'H'
	}
	return r
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
