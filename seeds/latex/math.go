package latex

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Span is a piece of a text: maths (Math), its source without the
// delimiters Open and Close ("$", "$$", `\(` and `\)`), or text.
type Span struct {
	Text        string
	Math        bool
	Open, Close string
}

// Spans splits s into text and maths. Maths is what pandoc's
// tex_math_dollars extension reads as maths: between two $ where the
// opening one is not followed by white space, and the closing one is
// not preceded by white space nor followed by a digit (so "$20,000 and
// $30,000" is text), except that a formula holding a command is maths
// whatever follows it ("$\approx$90%"); between $$ and $$; and between
// \( and \). A $ after a backslash is a dollar sign, and maths does not
// run over a blank line. The page (api/web/index.html, mathSpans) reads
// maths by the same rule.
func Spans(s string) []Span {
	var out []Span
	text := 0 // where the current text span starts
	for i := 0; i < len(s); {
		var open, close string
		switch {
		case strings.HasPrefix(s[i:], `\(`):
			open, close = `\(`, `\)`
		case s[i] == '\\':
			i += 2 // an escaped character
			continue
		case strings.HasPrefix(s[i:], "$$"):
			open, close = "$$", "$$"
		case s[i] == '$':
			open, close = "$", "$"
		default:
			i++
			continue
		}
		from := i + len(open)
		end, ok := mathEnd(s, from, close)
		if !ok {
			i = from
			continue
		}
		if i > text {
			out = append(out, Span{Text: s[text:i]})
		}
		out = append(out, Span{Text: s[from:end], Math: true, Open: open, Close: close})
		i = end + len(close)
		text = i
	}
	if text < len(s) {
		out = append(out, Span{Text: s[text:]})
	}
	return out
}

// mathEnd returns where the maths that starts at s[from] ends (the index
// of its closing delimiter, close), or false if it is not maths.
func mathEnd(s string, from int, close string) (int, bool) {
	dollar := close == "$"
	if r, _ := utf8.DecodeRuneInString(s[from:]); from == len(s) || dollar && unicode.IsSpace(r) {
		return 0, false
	}
	for j := from; j < len(s); j++ {
		switch {
		case strings.HasPrefix(s[j:], close):
			inner := s[from:j]
			if !dollar || inner == "" {
				return j, inner != ""
			}
			last, _ := utf8.DecodeLastRuneInString(inner)
			after := j + len(close)
			if unicode.IsSpace(last) || after < len(s) && s[after] >= '0' && s[after] <= '9' && !hasCommand(inner) {
				return 0, false
			}
			return j, true
		case s[j] == '\\':
			j++ // an escaped character: \$ or \\ is not a delimiter
		case s[j] == '\n' && strings.HasPrefix(strings.TrimLeft(s[j+1:], " \t\r"), "\n"):
			return 0, false // a blank line
		}
	}
	return 0, false
}

// hasCommand reports whether s holds a command: a backslash before a
// letter.
func hasCommand(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '\\' {
			if c := s[i+1]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				return true
			}
			i++
		}
	}
	return false
}

func isASCIILetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

// mathCommands are the commands that LaTeX, amsmath and amssymb define for
// maths (and the text commands that work in it), which EncodeMath keeps.
// Nothing here reads a file, writes one, or defines or redefines anything.
var mathCommands = func() map[string]bool { // read-only after init
	m := map[string]bool{}
	for _, list := range []string{
		// Greek letters and letter-like symbols.
		`alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa varkappa lambda mu nu xi pi varpi rho varrho
		sigma varsigma tau upsilon phi varphi chi psi omega digamma Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega
		varGamma varDelta varTheta varLambda varXi varPi varSigma varUpsilon varPhi varPsi varOmega
		ell hbar hslash imath jmath wp Re Im aleph beth gimel partial nabla infty emptyset varnothing complement eth mho Bbbk`,
		// Binary operators.
		`pm mp times div cdot ast star circ bullet oplus ominus otimes oslash odot cap cup sqcap sqcup vee wedge setminus
		smallsetminus wr diamond bigtriangleup bigtriangledown triangleleft triangleright amalg dagger ddagger uplus land lor
		dotplus ltimes rtimes circledast circledcirc circleddash boxplus boxminus boxtimes boxdot intercal barwedge veebar
		cdotp ldotp centerdot`,
		// Relations.
		`leq le geq ge neq ne equiv approx approxeq sim simeq cong propto prec succ preceq succeq ll gg lll ggg subset supset
		subseteq supseteq subsetneq supsetneq sqsubset sqsupset sqsubseteq sqsupseteq in ni notin owns mid nmid parallel
		nparallel perp models vdash dashv vDash Vdash asymp doteq doteqdot bowtie smile frown lesssim gtrsim leqslant geqslant
		lessapprox gtrapprox precsim succsim preccurlyeq succcurlyeq curlyeqprec curlyeqsucc triangleq eqsim backsim backsimeq
		lneq gneq lneqq gneqq nless ngtr nleq ngeq nsim ncong nsubseteq nsupseteq trianglelefteq trianglerighteq lhd rhd unlhd
		unrhd therefore because between pitchfork risingdotseq fallingdotseq circeq bumpeq Bumpeq thicksim thickapprox
		vartriangleleft vartriangleright ntriangleleft ntriangleright varpropto blacktriangleleft blacktriangleright`,
		// Arrows.
		`to gets leftarrow rightarrow Leftarrow Rightarrow leftrightarrow Leftrightarrow longleftarrow longrightarrow
		Longleftarrow Longrightarrow longleftrightarrow Longleftrightarrow mapsto longmapsto uparrow downarrow updownarrow
		Uparrow Downarrow Updownarrow nearrow searrow swarrow nwarrow hookleftarrow hookrightarrow leftharpoonup
		leftharpoondown rightharpoonup rightharpoondown rightleftharpoons leftrightharpoons iff implies impliedby
		twoheadrightarrow twoheadleftarrow rightsquigarrow leadsto nrightarrow nleftarrow nRightarrow nLeftarrow
		nleftrightarrow nLeftrightarrow leftleftarrows rightrightarrows upharpoonright downharpoonright curvearrowright
		curvearrowleft circlearrowright circlearrowleft Lsh Rsh multimap`,
		// Delimiters and their sizes.
		`langle rangle lceil rceil lfloor rfloor lvert rvert lVert rVert vert Vert lbrace rbrace backslash ulcorner urcorner
		llcorner lrcorner left right middle big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr Biggl Biggr bigm Bigm biggm Biggm`,
		// Big operators and named functions.
		`sum prod coprod int iint iiint iiiint idotsint oint bigcup bigcap bigvee bigwedge bigoplus bigotimes bigodot biguplus
		bigsqcup log ln lg exp sin cos tan cot sec csc arcsin arccos arctan sinh cosh tanh coth min max sup inf lim liminf
		limsup injlim projlim varliminf varlimsup arg det dim deg gcd hom ker Pr mod bmod pmod pod`,
		// Accents, fonts and text.
		`hat widehat tilde widetilde bar overline underline vec overrightarrow overleftarrow overleftrightarrow
		underrightarrow underleftarrow dot ddot dddot ddddot check breve acute grave mathring overbrace underbrace
		mathrm mathbf mathit mathsf mathtt mathcal mathbb mathfrak mathnormal boldsymbol pmb text mbox textbf textit textrm
		textsf texttt textup textsc textsl textnormal emph operatorname rm bf it sf tt cal mit sl`,
		// Fractions, roots, stacking, spacing, dots and the rest.
		`frac dfrac tfrac cfrac binom dbinom tbinom sqrt over atop choose stackrel overset underset substack limits nolimits
		displaystyle textstyle scriptstyle scriptscriptstyle mathop mathrel mathbin mathord mathopen mathclose mathpunct
		mathstrut strut not quad qquad enspace thinspace medspace thickspace negthinspace negmedspace negthickspace smash
		phantom hphantom vphantom allowbreak nobreak ldots cdots vdots ddots dots dotsc dotsb dotsm dotsi dotso prime
		backprime colon top bot forall exists nexists neg lnot angle measuredangle sphericalangle triangle
		triangledown vartriangle square Box Diamond blacksquare blacktriangle blacktriangledown lozenge blacklozenge
		bigstar checkmark clubsuit diamondsuit heartsuit spadesuit flat natural sharp surd S P dag ddag lbrack rbrack`,
	} {
		for _, name := range strings.Fields(list) {
			m[name] = true
		}
	}
	return m
}()
