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
		{`\emph{every} \textbf{bold} $O(n)$`, "every bold O(n)"},
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
