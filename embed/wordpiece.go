package embed

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer is BERT's uncased WordPiece tokenizer, behaving as the Hugging
// Face tokenizer of the same vocabulary does: text is cleaned (control
// characters dropped, white space unified), CJK ideographs are split apart,
// accents are stripped and letters lower-cased, words are split at white
// space and punctuation, and each word is cut greedily into the longest
// vocabulary pieces, continuation pieces carrying a "##" prefix.
type Tokenizer struct {
	vocab map[string]int32
	cls   int32
	sep   int32
	unk   int32
}

// maxWordRunes is the longest word WordPiece splits; a longer one is [UNK].
const maxWordRunes = 100

// NewTokenizer reads a vocabulary with one token per line, the line number
// (from 0) being the token id.
func NewTokenizer(vocab []byte) (*Tokenizer, error) {
	t := &Tokenizer{vocab: make(map[string]int32, 32000)}
	sc := bufio.NewScanner(bytes.NewReader(vocab))
	for id := int32(0); sc.Scan(); id++ {
		tok := strings.TrimRight(sc.Text(), "\r")
		if _, dup := t.vocab[tok]; !dup {
			t.vocab[tok] = id
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read vocabulary: %w", err)
	}
	for _, s := range []struct {
		name string
		id   *int32
	}{{"[CLS]", &t.cls}, {"[SEP]", &t.sep}, {"[UNK]", &t.unk}} {
		id, ok := t.vocab[s.name]
		if !ok {
			return nil, fmt.Errorf("vocabulary has no %s token", s.name)
		}
		*s.id = id
	}
	return t, nil
}

// Encode returns the token ids of text framed by [CLS] and [SEP], keeping at
// most maxLen ids in all: word pieces past maxLen-2 are dropped.
func (t *Tokenizer) Encode(text string, maxLen int) []int32 {
	ids, _ := t.EncodeParts([]string{text}, maxLen)
	return ids
}

// EncodeParts returns the token ids of parts joined by spaces, framed as
// Encode frames them, and where each part's word pieces lie: ids[spans[i][0]:spans[i][1]].
// A part the window cuts off entirely has an empty span; one it cuts
// short keeps the pieces that fit.
func (t *Tokenizer) EncodeParts(parts []string, maxLen int) (ids []int32, spans [][2]int) {
	n := 0
	for _, p := range parts {
		n += len(p) + 1
	}
	ids = append(make([]int32, 0, min(maxLen, n/3+2)), t.cls)
	spans = make([][2]int, len(parts))
	for i, p := range parts {
		start := len(ids)
		for _, w := range basicTokens(p) {
			if len(ids) >= maxLen-1 {
				break
			}
			ids = t.appendPieces(ids, w)
		}
		if len(ids) > maxLen-1 {
			ids = ids[:maxLen-1]
		}
		spans[i] = [2]int{start, len(ids)}
	}
	return append(ids, t.sep), spans
}

func (t *Tokenizer) appendPieces(ids []int32, word string) []int32 {
	if utf8.RuneCountInString(word) > maxWordRunes {
		return append(ids, t.unk)
	}
	mark := len(ids)
	// The candidate piece, on the stack for most words; a map lookup by
	// string(key) does not allocate.
	var buf [64]byte
	key := buf[:0]
	for start := 0; start < len(word); {
		end := len(word)
		found := int32(-1)
		for end > start {
			key = key[:0]
			if start > 0 {
				key = append(key, "##"...)
			}
			key = append(key, word[start:end]...)
			if id, ok := t.vocab[string(key)]; ok {
				found = id
				break
			}
			// Step back one whole rune.
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if found < 0 {
			return append(ids[:mark], t.unk)
		}
		ids = append(ids, found)
		start = end
	}
	return ids
}

// basicTokens normalises text and splits it into words and punctuation marks.
func basicTokens(text string) []string {
	// Clean: drop NUL, U+FFFD and control characters; unify white space;
	// put spaces around CJK ideographs so each is a word of its own.
	var b strings.Builder
	b.Grow(len(text))
	for _, r := range text {
		switch {
		case r == 0 || r == utf8.RuneError || isControl(r):
		case isWhitespace(r):
			b.WriteByte(' ')
		case isCJK(r):
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	// Strip accents (decompose, drop nonspacing marks), then lower-case.
	decomposed := norm.NFD.String(b.String())
	b.Reset()
	for _, r := range decomposed {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	// Split at white space and punctuation; each punctuation mark is a token.
	var words []string
	s := b.String()
	start := -1
	for i, r := range s {
		switch {
		case isWhitespace(r):
			if start >= 0 {
				words = append(words, s[start:i])
				start = -1
			}
		case isPunct(r):
			if start >= 0 {
				words = append(words, s[start:i])
				start = -1
			}
			words = append(words, s[i:i+utf8.RuneLen(r)])
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		words = append(words, s[start:])
	}
	return words
}

func isWhitespace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || unicode.IsSpace(r)
}

// isControl matches the characters BERT's cleaning drops: Unicode "other"
// categories (control, format, private use, surrogate, unassigned) except
// the tab and line breaks, which count as white space.
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) || !isAssigned(r)
}

func isAssigned(r rune) bool {
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.C)
}

func isPunct(r rune) bool {
	if r < 0x80 {
		return r >= 33 && r <= 47 || r >= 58 && r <= 64 || r >= 91 && r <= 96 || r >= 123 && r <= 126
	}
	return unicode.IsPunct(r)
}

func isCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF ||
		r >= 0x3400 && r <= 0x4DBF ||
		r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F ||
		r >= 0x2B740 && r <= 0x2B81F ||
		r >= 0x2B820 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF ||
		r >= 0x2F800 && r <= 0x2FA1F
}
