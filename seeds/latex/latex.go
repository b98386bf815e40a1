// Package latex turns the LaTeX found in bibliographic metadata (BibTeX
// fields, arXiv titles and author names) into plain Unicode text.
package latex

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// accentMark returns the Unicode combining mark a LaTeX accent command
// puts on the next letter: \'e is e + U+0301, composed to é.
func accentMark(name string) (rune, bool) {
	const names, marks = "'`^\"~=.uvHckrdb", "\u0301\u0300\u0302\u0308\u0303\u0304\u0307\u0306\u030C\u030B\u0327\u0328\u030A\u0323\u0331"
	if len(name) != 1 {
		return 0, false
	}
	if k := strings.IndexByte(names, name[0]); k >= 0 {
		return []rune(marks)[k], true
	}
	return 0, false
}

// symbol returns the text of a LaTeX command that stands for a character.
func symbol(name string) (string, bool) {
	switch name {
	case "ss":
		return "ß", true
	case "o":
		return "ø", true
	case "O":
		return "Ø", true
	case "l":
		return "ł", true
	case "L":
		return "Ł", true
	case "ae":
		return "æ", true
	case "AE":
		return "Æ", true
	case "oe":
		return "œ", true
	case "OE":
		return "Œ", true
	case "aa":
		return "å", true
	case "AA":
		return "Å", true
	case "i":
		return "ı", true
	case "&", "%", "$", "#", "_", "{", "}":
		return name, true
	case "textbackslash":
		return `\`, true
	case "textbraceleft", "lbrace":
		return "{", true
	case "textbraceright", "rbrace":
		return "}", true
	case "textasciitilde":
		return "~", true
	case "textasciicircum":
		return "^", true
	case "textendash":
		return "–", true
	case "textemdash":
		return "—", true
	case "ldots", "dots":
		return "…", true
	case " ", ",":
		return " ", true
	case "ell":
		return "ℓ", true
	case "infty":
		return "∞", true
	case "alpha":
		return "α", true
	case "beta":
		return "β", true
	case "gamma":
		return "γ", true
	case "delta":
		return "δ", true
	case "epsilon":
		return "ε", true
	case "lambda":
		return "λ", true
	case "mu":
		return "μ", true
	case "pi":
		return "π", true
	case "sigma":
		return "σ", true
	case "theta":
		return "θ", true
	}
	return "", false
}

// Decode turns LaTeX into plain Unicode text: accents and special
// characters become characters, grouping braces (those that pair up; a
// brace without its pair is text) go, text-style commands (\emph{x},
// \textbf{x}) keep their argument, ~ is a space, -- and --- are dashes,
// two backquotes or two apostrophes are curly double quotes, and white
// space is collapsed. Unknown commands keep their name's argument text and
// lose the backslash. Maths (Spans) stays LaTeX, its source between its
// delimiters as it was written (white space collapsed), as papers hold it
// and the page shows it: "$p \le \frac{1}{n}$" is not "p 1n". A $ that
// opens no maths is a dollar sign.
func Decode(s string) string {
	var b strings.Builder
	rs := []rune(s)
	maths := mathRuns(s)
	grouping := groupingBraces(rs, maths)
	for i := 0; i < len(rs); i++ {
		for len(maths) > 0 && maths[0][0] < i {
			maths = maths[1:] // stepped over (an accent command takes the rune after it, a $ too)
		}
		if len(maths) > 0 && maths[0][0] == i {
			b.WriteString(string(rs[i:maths[0][1]]))
			i = maths[0][1] - 1
			maths = maths[1:]
			continue
		}
		r := rs[i]
		switch {
		case (r == '{' || r == '}') && !grouping[i]:
			b.WriteRune(r) // a brace without its pair groups nothing: it is text
		case r == '{' || r == '}':
			continue
		case r == '~':
			b.WriteRune(' ')
		case r == '-' && i+1 < len(rs) && rs[i+1] == '-':
			if i+2 < len(rs) && rs[i+2] == '-' {
				b.WriteRune('—')
				i += 2
			} else {
				b.WriteRune('–')
				i++
			}
		case (r == '`' || r == '\'') && i+1 < len(rs) && rs[i+1] == r:
			if r == '`' {
				b.WriteRune('“')
			} else {
				b.WriteRune('”')
			}
			i++
		case r == '\\' && i+1 < len(rs):
			i = command(rs, i+1, &b)
		default:
			b.WriteRune(r)
		}
	}
	return strings.Join(strings.Fields(norm.NFC.String(b.String())), " ")
}

// mathRuns returns where s's maths (Spans) lies, each [start, end) in
// runes, its delimiters included.
func mathRuns(s string) [][2]int {
	var out [][2]int
	at, r := 0, 0 // the span's first byte and rune
	for _, sp := range Spans(s) {
		n := len(sp.Text)
		if sp.Math {
			n += len(sp.Open) + len(sp.Close)
		}
		runes := utf8.RuneCountInString(s[at : at+n])
		if sp.Math {
			out = append(out, [2]int{r, r + runes})
		}
		at, r = at+n, r+runes
	}
	return out
}

// groupingBraces reports which of rs's braces outside maths (at the
// rune ranges maths, in order) pair up (a backslash's next rune
// excepted): those group, the others are literal braces.
func groupingBraces(rs []rune, maths [][2]int) []bool {
	grouping := make([]bool, len(rs))
	var open []int
	for i := 0; i < len(rs); i++ {
		for len(maths) > 0 && maths[0][0] < i {
			maths = maths[1:]
		}
		if len(maths) > 0 && maths[0][0] == i {
			i = maths[0][1] - 1
			maths = maths[1:]
			continue
		}
		switch rs[i] {
		case '\\':
			i++
		case '{':
			open = append(open, i)
		case '}':
			if n := len(open); n > 0 {
				grouping[open[n-1]], grouping[i] = true, true
				open = open[:n-1]
			}
		}
	}
	return grouping
}

// command decodes the command whose name starts at rs[i] (after the
// backslash), writing its text to b, and returns the index of its last rune.
func command(rs []rune, i int, b *strings.Builder) int {
	name := string(rs[i])
	end := i
	if unicode.IsLetter(rs[i]) {
		for end+1 < len(rs) && unicode.IsLetter(rs[end+1]) {
			end++
		}
		name = string(rs[i : end+1])
	}
	if mark, ok := accentMark(name); ok {
		// The accented letter follows, maybe braced or after a space: \'e,
		// \'{e}, \c c, \v{\i}.
		j := end + 1
		for j < len(rs) && (rs[j] == '{' || rs[j] == ' ') {
			j++
		}
		if j+1 < len(rs) && rs[j] == '\\' && (rs[j+1] == 'i' || rs[j+1] == 'j') {
			b.WriteRune(rs[j+1]) // a dotless i or j under an accent is the letter
			b.WriteRune(mark)
			j += 2
		} else if j < len(rs) {
			b.WriteRune(rs[j])
			b.WriteRune(mark)
			j++
		}
		for j < len(rs) && rs[j] == '}' {
			j++
		}
		return j - 1
	}
	if sym, ok := symbol(name); ok {
		b.WriteString(sym)
		if unicode.IsLetter(rs[i]) && end+1 < len(rs) && rs[end+1] == ' ' {
			end++ // the space that ends a command name is not text
		}
		return end
	}
	// \emph{x}, \textbf{x}, an unknown command: its argument is text.
	return end
}

// HasMarkup reports whether s holds LaTeX: a command (a backslash before a
// letter), an accent on a letter or a group (\'e, \~{a}), or maths (see
// Spans).
func HasMarkup(s string) bool {
	if hasCommand(s) {
		return true
	}
	for i := 0; i+2 < len(s); i++ {
		if s[i] == '\\' {
			if c := s[i+2]; strings.IndexByte("'`^\"~=.", s[i+1]) >= 0 && (c == '{' || isASCIILetter(rune(c))) {
				return true
			}
			i++
		}
	}
	for _, sp := range Spans(s) {
		if sp.Math {
			return true
		}
	}
	return false
}

// Encode writes plain text as LaTeX that Decode turns back into it (white
// space collapsed): the characters LaTeX or BibTeX read specially are
// escaped, braces as \textbraceleft{} and \textbraceright{} so that the
// result's braces always balance, and the pairs Decode reads as one
// character (--, two backquotes, two apostrophes) are kept apart.
func Encode(s string) string {
	var b strings.Builder
	rs := []rune(strings.Join(strings.Fields(s), " "))
	for i, r := range rs {
		switch r {
		case '\\':
			b.WriteString(`\textbackslash{}`)
		case '{':
			b.WriteString(`\textbraceleft{}`)
		case '}':
			b.WriteString(`\textbraceright{}`)
		case '&', '%', '$', '#', '_':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '~':
			b.WriteString(`\textasciitilde{}`)
		case '^':
			b.WriteString(`\textasciicircum{}`)
		case '-', '`', '\'':
			b.WriteRune(r)
			if i+1 < len(rs) && rs[i+1] == r {
				b.WriteString("{}")
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
