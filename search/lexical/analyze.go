// Package lexical is papersearch's lexical side: the one text analyser
// (Analyze, Tokens) and BM25 (its weights, the query's reading, and an
// in-memory inverted index), shared by both stores, queries and
// explanations.
package lexical

import (
	"strings"
	"unicode"
	"unicode/utf8"

	porter "github.com/blevesearch/go-porterstemmer"

	"github.com/papersearch/papersearch"
)

// The lexical side's one analyser, shared by both stores, the query, and
// the explanations. It behaves as Lucene's EnglishAnalyzer does for
// Pyserini's BM25 baselines, with accents folded as Lucene's
// ASCIIFoldingFilter does: text is lower-cased and split at every
// character that is not a letter or digit, an English possessive ('s) is
// dropped, Lucene's English stop words are removed, and what remains is
// Porter-stemmed.

// stopWords is Lucene's English stop word set (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET).
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "but": true,
	"by": true, "for": true, "if": true, "in": true, "into": true, "is": true, "it": true, "no": true,
	"not": true, "of": true, "on": true, "or": true, "such": true, "that": true, "the": true,
	"their": true, "then": true, "there": true, "these": true, "they": true, "this": true, "to": true,
	"was": true, "will": true, "with": true,
}

// functionWords are common English function words that Lucene's stop set
// keeps (so BM25 scores them, weakly, as the baselines do) but that an
// explanation does not show as a matched word: "from" and "we" explain
// nothing.
var functionWords = map[string]bool{
	"about": true, "above": true, "after": true, "again": true, "all": true, "also": true, "am": true, "any": true,
	"been": true, "before": true, "being": true, "between": true, "both": true, "can": true, "could": true,
	"did": true, "do": true, "does": true, "doing": true, "down": true, "during": true, "each": true, "few": true,
	"from": true, "further": true, "had": true, "has": true, "have": true, "having": true, "he": true, "her": true,
	"here": true, "hers": true, "him": true, "his": true, "how": true, "i": true, "its": true, "itself": true,
	"just": true, "may": true, "me": true, "might": true, "more": true, "most": true, "my": true, "nor": true,
	"now": true, "off": true, "once": true, "only": true, "other": true, "our": true, "ours": true, "out": true,
	"over": true, "own": true, "same": true, "she": true, "should": true, "so": true, "some": true, "than": true,
	"them": true, "those": true, "through": true, "too": true, "under": true, "until": true, "up": true,
	"us": true, "very": true, "we": true, "were": true, "what": true, "when": true, "where": true, "which": true,
	"while": true, "who": true, "whom": true, "why": true, "would": true, "you": true, "your": true,
}

// IsFunctionWord reports whether word (as Words gives it) is a function
// word an explanation does not show as a match (see functionWords).
func IsFunctionWord(word string) bool { return functionWords[word] || stopWords[word] }

// Token is one indexed term with the word of the text it came from.
type Token struct {
	Term string // stemmed index term
	Word string // the word as written, lower-cased
}

// Analyze returns the index terms of text, in order, repeats kept.
func Analyze(text string) []string {
	toks := Tokens(text)
	terms := make([]string, len(toks))
	for i, t := range toks {
		terms[i] = t.Term
	}
	return terms
}

// Tokens returns the index terms of text with the words they came from:
// its Words without stop words, stemmed.
func Tokens(text string) []Token {
	var out []Token
	for _, word := range Words(text) {
		if term, ok := Term(word); ok {
			out = append(out, Token{Term: term, Word: word})
		}
	}
	return out
}

// Term returns the index term of one of Words' words, false for a stop
// word.
func Term(word string) (string, bool) {
	if stopWords[word] {
		return "", false
	}
	return porter.StemString(word), true
}

// Words splits text into its words, accents folded and lower-cased
// (papersearch.Fold: "Naïve" is "naive"), in order: runs of letters,
// digits and combining marks, a possessive 's dropped ("model's" is
// "model").
func Words(text string) []string {
	var out []string
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !IsWordRune(r) {
			i += size
			continue
		}
		start := i
		for i < len(text) {
			r, size = utf8.DecodeRuneInString(text[i:])
			if !IsWordRune(r) {
				break
			}
			i += size
		}
		word := strings.ToLower(papersearch.Fold(text[start:i]))
		// Possessive: "model's" and "model’s" index as "model".
		if rest := text[i:]; strings.HasPrefix(rest, "'s") || strings.HasPrefix(rest, "’s") {
			j := i + len("'s")
			if strings.HasPrefix(rest, "’s") {
				j = i + len("’s")
			}
			if next, _ := utf8.DecodeRuneInString(text[j:]); j == len(text) || !IsWordRune(next) {
				i = j
			}
		}
		if word != "" { // a run of combining marks alone folds to nothing
			out = append(out, word)
		}
	}
	return out
}

// IsWordRune reports whether r belongs to a word: a letter, a digit, or a
// combining mark (the accent of a decomposed letter: "naı̈ve" is one word).
func IsWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}
