package latex

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// EncodeMath writes the source of a formula (a Span's Text) as LaTeX maths
// that keeps its meaning, that a document citing it compiles (with
// amsmath and amssymb), and that every BibTeX parser reads within one
// value. A command that LaTeX, amsmath or amssymb defines for maths (see
// mathCommands) is kept; any other (a paper's own macro such as \eps, or
// one that is not maths, such as \input) is written as its name in text,
// {\mbox{\textbackslash{}eps}}, so that it is shown and never run. \{ and
// \} become \lbrace and \rbrace (BibTeX counts a brace even after a
// backslash); %, #, & and $ are escaped; the argument of \text, \mbox and
// the like is written as text; white space is collapsed. A command given
// as the argument of another, or of ^ or _, is braced with its own
// arguments (y^\max is y^{\max}, \tilde\mathcal{O} is
// \tilde{\mathcal{O}}), as MathJax reads them. It reports false when the
// formula is not well formed: its braces or its \left and \right do not
// pair, a ^ or _ has nothing to raise or lower, an atom has two
// superscripts or two subscripts, a group two of \over, \atop and
// \choose, or \limits follows no operator.
func EncodeMath(src string) (string, bool) {
	e := &mathEncoder{rs: []rune(strings.Join(strings.Fields(src), " "))}
	e.math(0)
	out := strings.TrimSpace(e.b.String())
	return out, !e.bad && e.i == len(e.rs) && out != ""
}

// mathEncoder writes a formula as EncodeMath does, reading it from rs[i].
type mathEncoder struct {
	rs   []rune
	i    int
	b    strings.Builder
	word bool // what was written last is a control word
	bad  bool // the formula is not well formed
}

// write writes s, with a space between a control word and a letter.
func (e *mathEncoder) write(s string) {
	if s == "" {
		return
	}
	if r, _ := utf8.DecodeRuneInString(s); e.word && unicode.IsLetter(r) {
		e.b.WriteByte(' ')
	}
	e.b.WriteString(s)
	k := len(s)
	for k > 0 && isASCIILetter(rune(s[k-1])) {
		k--
	}
	e.word = k < len(s) && k > 0 && s[k-1] == '\\'
}

// peek returns the rune at i, or 0 past the end.
func (e *mathEncoder) peek() rune {
	if e.i < len(e.rs) {
		return e.rs[e.i]
	}
	return 0
}

// skipSpace moves past a space.
func (e *mathEncoder) skipSpace() {
	if e.peek() == ' ' {
		e.i++
	}
}

// name reads the command at i (a backslash), returning its name: letters,
// or the one character after the backslash ("" for a backslash at the end).
func (e *mathEncoder) name() string {
	e.i++ // the backslash
	start := e.i
	for e.i < len(e.rs) && isASCIILetter(e.rs[e.i]) {
		e.i++
	}
	if e.i == start && e.i < len(e.rs) {
		e.i++
	}
	return string(e.rs[start:e.i])
}

// math writes maths up to stop ('}' or ']', not consumed), or to the end
// when stop is 0.
func (e *mathEncoder) math(stop rune) {
	lefts, fracs := 0, 0
	sup, sub := false, false // the current atom's scripts
	op := false              // the current atom is an operator (\sum, \log)
	for e.i < len(e.rs) && !e.bad {
		r := e.rs[e.i]
		if r == stop {
			break
		}
		switch r {
		case '}':
			e.bad = true // closes a group that never opened
		case ' ':
			e.write(" ")
			e.i++
		case '^', '_':
			if r == '^' && sup || r == '_' && sub {
				e.bad = true // a double superscript or subscript
				break
			}
			sup, sub = sup || r == '^', sub || r == '_'
			e.write(string(r))
			e.i++
			e.arg(false)
		case '\'':
			e.bad = e.bad || sup // x^2' is a double superscript
			e.write("'")
			e.i++
		default:
			wasOp := op
			sup, sub, op = false, false, false
			switch r {
			case '{':
				e.group(false)
			case '\\':
				switch name := e.name(); name {
				case "left":
					lefts++
					e.delimited(name)
				case "right", "middle":
					if lefts == 0 {
						e.bad = true
					}
					if name == "right" {
						lefts--
					}
					e.delimited(name)
				case "limits", "nolimits":
					e.bad = e.bad || !wasOp // "Limit controls must follow a math operator"
					op = true
					e.write(`\` + name)
				case "over", "atop", "choose":
					fracs++
					e.bad = e.bad || fracs > 1 // "Ambiguous; you need another { and }"
					e.write(`\` + name)
				default:
					e.command(name)
					op = operators[name]
				}
			case '%', '#', '&', '$':
				e.write(`\` + string(r))
				e.i++
			default:
				e.write(string(r))
				e.i++
			}
		}
	}
	e.bad = e.bad || lefts != 0
}

// group writes the group at i, maths or text, with its braces.
func (e *mathEncoder) group(text bool) {
	e.i++ // {
	e.write("{")
	if text {
		e.text()
	} else {
		e.math('}')
	}
	if e.peek() != '}' {
		e.bad = true
		return
	}
	e.i++
	e.write("}")
}

// command writes the command name (read), with its arguments.
func (e *mathEncoder) command(name string) {
	switch {
	case name == "":
		e.write(`\backslash`)
	case len(name) == 1 && !isASCIILetter(rune(name[0])):
		e.write(controlSymbol(name[0]))
	case !mathCommands[name]:
		e.write(`{\mbox{\textbackslash{}` + name + `}}`)
	case delimiterSizes[name]:
		e.delimited(name)
	default:
		n, text := commandArgs(name)
		e.write(`\` + name)
		if name == "sqrt" || name == "cfrac" {
			e.skipSpace()
			if e.peek() == '[' { // an optional argument
				e.i++
				e.write("[")
				e.math(']')
				if e.peek() != ']' {
					e.bad = true
					return
				}
				e.i++
				e.write("]")
			}
		}
		for k := 0; k < n && !e.bad; k++ {
			e.arg(text)
		}
	}
}

// controlSymbol writes a backslash and a character that is not a letter,
// in maths.
func controlSymbol(c byte) string {
	switch c {
	case '{':
		return `\lbrace`
	case '}':
		return `\rbrace`
	case '%', '#', '&', '_', '$', '|', ',', ';', ':', '!', ' ':
		return `\` + string(c)
	}
	return `{\mbox{\textbackslash{}` + Encode(string(c)) + `}}` // \\, \', \( … are shown
}

// arg writes one argument of a command, ^ or _: a group, a command (braced,
// with its own arguments), or a character; text for a text command's.
func (e *mathEncoder) arg(text bool) {
	e.skipSpace()
	switch r := e.peek(); {
	case r == 0 || r == '}' || r == '^' || r == '_' || r == ']':
		e.bad = true // nothing to apply to
	case r == '{':
		e.group(text)
	case r == '\\' && text:
		e.write("{")
		e.textCommand(e.name())
		e.write("}")
	case r == '\\':
		name := e.name()
		if name == "over" || name == "atop" || name == "choose" || name == "left" || name == "right" || name == "middle" {
			e.bad = true
			return
		}
		e.write("{")
		e.command(name)
		e.write("}")
	default:
		e.i++
		switch {
		case text:
			e.write(Encode(string(r)))
		case r == '%' || r == '#' || r == '&' || r == '$':
			e.write(`\` + string(r))
		case r > unicode.MaxASCII:
			e.write("{" + string(r) + "}")
		default:
			e.write(string(r))
		}
	}
}

// delimited writes \left, \right, \middle or a \big (name) and the
// delimiter after it.
func (e *mathEncoder) delimited(name string) {
	e.write(`\` + name)
	e.skipSpace()
	switch r := e.peek(); {
	case r == '\\':
		d := e.name()
		switch {
		case d == "{" || d == "}" || d == "|":
			e.write(controlSymbol(d[0]))
		case delimiters[d]:
			e.write(`\` + d)
		default:
			e.bad = true
		}
	case r != 0 && strings.ContainsRune("()[]|/.<>", r) || r > unicode.MaxASCII && !unicode.IsLetter(r):
		e.i++
		e.write(string(r))
	default:
		e.bad = true // "Missing delimiter"
	}
}

// text writes the text of a text command's argument, up to its closing
// brace (not consumed): LaTeX's special characters escaped, text commands
// kept, any other command shown as its name.
func (e *mathEncoder) text() {
	for e.i < len(e.rs) && !e.bad {
		switch r := e.rs[e.i]; r {
		case '}':
			return
		case '{':
			e.group(true)
		case '\\':
			e.textCommand(e.name())
		case ' ', '~':
			e.i++
			e.write(string(r))
		default:
			e.i++
			e.write(Encode(string(r)))
		}
	}
}

// textCommand writes the command name (read) in text.
func (e *mathEncoder) textCommand(name string) {
	switch {
	case name == "":
		e.write(`\textbackslash{}`)
	case len(name) == 1 && strings.Contains("%#&_$ ,", name):
		e.write(`\` + name)
	case len(name) == 1:
		e.write(`\textbackslash{}` + Encode(name))
	case textCommands[name]:
		e.write(`\` + name)
		if n, _ := commandArgs(name); n > 0 {
			e.arg(true)
		}
	default:
		e.write(`\textbackslash{}` + name)
	}
}

// commandArgs is how many arguments a command of mathCommands takes, and
// whether they are text.
func commandArgs(name string) (n int, text bool) {
	switch {
	case textArgCommands[name]:
		return 1, true
	case oneArgCommands[name]:
		return 1, false
	case twoArgCommands[name]:
		return 2, false
	}
	return 0, false
}

// words turns a list of names into a set.
func words(list string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(list) {
		m[w] = true
	}
	return m
}

// The commands of mathCommands by their arguments (read-only): the others
// take none.
var (
	textArgCommands = words(`text mbox textbf textit textrm textsf texttt textup textsc textsl textnormal emph`)
	oneArgCommands  = words(`sqrt hat widehat tilde widetilde bar overline underline vec overrightarrow overleftarrow
		overleftrightarrow underrightarrow underleftarrow dot ddot dddot ddddot check breve acute grave mathring overbrace
		underbrace mathrm mathbf mathit mathsf mathtt mathcal mathbb mathfrak mathnormal boldsymbol pmb operatorname
		phantom hphantom vphantom smash substack mathop mathrel mathbin mathord mathopen mathclose mathpunct pmod pod`)
	twoArgCommands = words(`frac dfrac tfrac cfrac binom dbinom tbinom stackrel overset underset`)
	delimiterSizes = words(`big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr Biggl Biggr bigm Bigm biggm Biggm`)
	delimiters     = words(`langle rangle lceil rceil lfloor rfloor lvert rvert lVert rVert vert Vert lbrace rbrace
		backslash uparrow downarrow updownarrow Uparrow Downarrow Updownarrow ulcorner urcorner llcorner lrcorner lbrack rbrack`)
	// operators are the commands that make an operator, which \limits
	// and \nolimits may follow.
	operators = words(`sum prod coprod int iint iiint iiiint idotsint oint bigcup bigcap bigvee bigwedge bigoplus bigotimes
		bigodot biguplus bigsqcup log ln lg exp sin cos tan cot sec csc arcsin arccos arctan sinh cosh tanh coth min max sup
		inf lim liminf limsup injlim projlim varliminf varlimsup arg det dim deg gcd hom ker Pr mathop operatorname`)
	// textCommands are those kept in text: text styles and dots.
	textCommands = words(`text mbox textbf textit textrm textsf texttt textup textsc textsl textnormal emph ldots dots`)
)
