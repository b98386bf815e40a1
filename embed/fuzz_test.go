package embed

import (
	"testing"
)

// FuzzTokenizer encodes arbitrary text: never panics, always frames the ids
// with [CLS] and [SEP], stays within the window and the vocabulary.
func FuzzTokenizer(f *testing.F) {
	f.Add("graph neural networks")
	f.Add("Naïve café — 中文 🤖 $\\alpha$ \x00\xff")
	f.Add("supercalifragilisticexpialidocious" + string(make([]byte, 300)))
	l := testLocal(f)
	tok, maxLen := l.Tokenizer(), l.MaxTokens()
	vocab := int32(len(tok.vocab))
	f.Fuzz(func(t *testing.T, text string) {
		ids := tok.Encode(text, maxLen)
		if len(ids) < 2 || len(ids) > maxLen || ids[0] != tok.cls || ids[len(ids)-1] != tok.sep {
			t.Fatalf("Encode(%q) = %v", text, ids)
		}
		for _, id := range ids {
			if id < 0 || id >= vocab {
				t.Fatalf("id %d outside the vocabulary", id)
			}
		}
	})
}
