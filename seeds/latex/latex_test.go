package latex

import "testing"

func TestDecode(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`G{\"o}del`, "Gödel"},
		{`Erd\H{o}s`, "Erdős"},
		{`Fran{\c c}ois`, "François"},
		{`{\L}ukasiewicz`, "Łukasiewicz"},
		{`M\"uller and Schr\"{o}dinger`, "Müller and Schrödinger"},
		{`na\"{\i}ve`, "naïve"},
		{`{\ss} \o{} \aa\ \ae`, "ß ø å æ"},
		{`50\% of \$5 \& more`, "50% of $5 & more"},
		{`pages 1--10 --- said`, "pages 1–10 — said"},
		{"``quoted''", "“quoted”"},
		{`\emph{every} \textbf{bold} $O(n)$`, "every bold $O(n)$"},
		// Maths stays LaTeX, inside grouping braces too; a dollar that
		// opens no maths is one.
		{`{On the {Evolution} of Graphs with $n \log  n$ edges and $p \le \frac{1}{n}$}`,
			`On the Evolution of Graphs with $n \log n$ edges and $p \le \frac{1}{n}$`},
		{`{\'E}tude $$\sum_{i}^{n} x_i$$ \(k \to \infty\) for $5 or $10`, `Étude $$\sum_{i}^{n} x_i$$ \(k \to \infty\) for $5 or $10`},
		{`{Caf\'e $\{x\}$ {au} lait}`, `Café $\{x\}$ au lait`},
		// An accent that takes a $ as its letter steps over that formula;
		// the ones after it stay maths.
		{`\= $x$ then $\frac{1}{n}$`, "$\u0304x$ then $\\frac{1}{n}$"},
		{"{The {Transformer}}\n   model", "The Transformer model"},
		{`non~breaking`, "non breaking"},
		{`\v{S}koda \'{e}t\'e \^o \~n \=a \.z \u{g} \r{a} \k{a}`, "Škoda été ô ñ ā ż ğ å ą"},
		{"\\`a", "à"},
		{`a stray } brace, \emph{x}`, "a stray } brace, x"},
		{`an open { and {grouped} text`, "an open { and grouped text"},
		{`}{`, "}{"},
		{`\{ escaped \} {pair}`, "{ escaped } pair"},
	} {
		if got := Decode(tt.in); got != tt.want {
			t.Errorf("Decode(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
