package storage

import (
	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/roles"
)

// Sentence is one sentence of a paper's abstract as a store keeps it: its
// rhetorical role and the unit vector of its text, pooled from the paper's
// encoder pass where the model can, else embedded on its own
// (search/embedding.Models.Documents). A paper's sentences are those of
// Sentences(paper).
type Sentence struct {
	Role   roles.Role
	Vector []float32
}

// MaxSentences bounds the sentences of one abstract that get a vector (and
// that explanations consider); an abstract's later sentences have none.
const MaxSentences = 24

// Sentences returns the sentences of p's abstract that get vectors: those
// of papersearch.Sentences, in order, at most MaxSentences.
func Sentences(p papersearch.Paper) []string {
	ss := papersearch.Sentences(p.Abstract)
	return ss[:min(len(ss), MaxSentences)]
}
