package latex

import (
	"fmt"
	"strings"
	"testing"
)

// show writes spans as text with the maths marked «open…close».
func show(spans []Span) string {
	var b strings.Builder
	for _, sp := range spans {
		if sp.Math {
			fmt.Fprintf(&b, "«%s%s%s»", sp.Open, sp.Text, sp.Close)
		} else {
			b.WriteString(sp.Text)
		}
	}
	return b.String()
}

func TestSpans(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`rates $O(1/\sqrt{n})$ and $V \approx WH$.`, `rates «$O(1/\sqrt{n})$» and «$V \approx WH$».`},
		{`$\Gamma$-trace norm`, `«$\Gamma$»-trace norm`},
		// Prices are not maths (pandoc's rule).
		{"costs $20,000 and $30,000", "costs $20,000 and $30,000"},
		{"between $5-$10 a month", "between $5-$10 a month"},
		{"from $ 5 to $10", "from $ 5 to $10"},
		{`\$0.23 - \$0.27 and $x$`, `\$0.23 - \$0.27 and «$x$»`},
		// A formula with a command is maths whatever follows it.
		{`on $\approx$90% of tasks; [$-$1, 1]`, `on «$\approx$»90% of tasks; [$-$1, 1]`},
		{`$$\sum_i x_i$$ and \(k\)-means`, `«$$\sum_i x_i$$» and «\(k\)»-means`},
		{`a $\$5$ fee`, `a «$\$5$» fee`},
		{"$x\n\ny$ over a blank line", "$x\n\ny$ over a blank line"},
		{"$x\ny$ over a line", "«$x\ny$» over a line"},
		{`\\$x$`, `\\«$x$»`},
		{"a lone $", "a lone $"},
		{"$$", "$$"},
	} {
		if got := show(Spans(tt.in)); got != tt.want {
			t.Errorf("Spans(%q) = %q, want %q", tt.in, got, tt.want)
		}
		var joined strings.Builder
		for _, sp := range Spans(tt.in) {
			joined.WriteString(sp.Open + sp.Text + sp.Close)
		}
		if joined.String() != tt.in {
			t.Errorf("Spans(%q) joined is %q", tt.in, joined.String())
		}
	}
}

func TestHasMarkup(t *testing.T) {
	for in, want := range map[string]bool{
		`$x$ and more`: true, `\emph{x}`: true, `Jo\~{a}o`: true, `Jos\'e`: true,
		"costs $5 and $10": false, `50\% off`: false, "plain": false, `a \ b`: false,
	} {
		if got := HasMarkup(in); got != want {
			t.Errorf("HasMarkup(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestEncodeMath(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`O(1/\sqrt{n})`, `O(1/\sqrt{n})`},
		{`V \approx WH`, `V \approx WH`},
		{`\Gamma`, `\Gamma`},
		{`\Sigma^\omega`, `\Sigma^{\omega}`},
		{`\mathcal{O}(\log n)`, `\mathcal{O}(\log n)`},
		{`\sqrt[3]{x}\frac12`, `\sqrt[3]{x}\frac12`},
		{`\left\{ x \right\}`, `\left\lbrace x \right\rbrace`},
		{`\{x\}`, `\lbrace x\rbrace`},
		{`50% \# & $`, `50\% \# \& \$`},
		{"a  \n b", "a b"},
		// Commands as arguments are braced with theirs, as MathJax reads them.
		{`y^\max`, `y^{\max}`},
		{`\tilde\mathcal{O}(n)`, `\tilde{\mathcal{O}}(n)`},
		{`\sqrt\log n`, `\sqrt{\log} n`},
		// No command but LaTeX's, amsmath's and amssymb's runs: the rest is shown.
		{`\input{/etc/passwd}`, `{\mbox{\textbackslash{}input}}{/etc/passwd}`},
		{`\eps_\cO`, `{\mbox{\textbackslash{}eps}}_{{\mbox{\textbackslash{}cO}}}`},
		{`a \\ b`, `a {\mbox{\textbackslash{}\textbackslash{}}} b`},
		{`\'e`, `{\mbox{\textbackslash{}'}}e`},
		// A text argument is text.
		{`\text{a^b_c 50% \alpha}`, `\text{a\textasciicircum{}b\_c 50\% \textbackslash{}alpha}`},
		{`\textbf{\emph{x}}`, `\textbf{\emph{x}}`},
		{`\alpha x`, `\alpha x`},
		{`\alpha{}x`, `\alpha{}x`},
		{`\sum\limits_{i=1}^n \log_2\nolimits`, `\sum\limits_{i=1}^n \log_2\nolimits`},
	} {
		got, ok := EncodeMath(tt.in)
		if !ok || got != tt.want {
			t.Errorf("EncodeMath(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
}

// TestEncodeMathRefuses: formulas LaTeX would stop at are refused, and
// written as their source in text by the BibTeX writer.
func TestEncodeMathRefuses(t *testing.T) {
	for _, in := range []string{
		"x^", "x_}", "x^a^b", "z_i_i=1^M", "x^2'", "{x", "x}", `\frac{2\gamma{(1-\gamma)^2}\epsilon`,
		`\left( x`, `x \right)`, `\middle| x`, `\left x \right)`, `a\over b\over c`, `x^\over`, `x\limits_i`, `\text{a`, "", " ",
	} {
		if got, ok := EncodeMath(in); ok {
			t.Errorf("EncodeMath(%q) = %q, want it refused", in, got)
		}
	}
}

// TestEncodeMathBalancesForBibTeX: whatever the source, an accepted
// formula's braces balance as BibTeX counts them (a brace after a
// backslash too), so it cannot end a field value or open another.
func TestEncodeMathBalancesForBibTeX(t *testing.T) {
	for _, in := range []string{`\{`, `\}`, `\left\{x\right.`, `\text{\{}`, `\text{\}}`, `\mbox{\textbraceleft}`, `a\}\}\}`, `\\{x}`, `\{\text{\}}`} {
		got, ok := EncodeMath(in)
		if !ok {
			continue
		}
		depth := 0
		for _, r := range got {
			if r == '{' {
				depth++
			} else if r == '}' {
				if depth--; depth < 0 {
					break
				}
			}
		}
		if depth != 0 {
			t.Errorf("EncodeMath(%q) = %q: braces do not balance for BibTeX", in, got)
		}
	}
}
