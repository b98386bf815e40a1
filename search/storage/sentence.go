package storage

import "github.com/papersearch/papersearch/search/roles"

// Sentence is one sentence of a paper's abstract as a store keeps it: its
// rhetorical role and the unit vector of its text, pooled from the paper's
// encoder pass where the model can, else embedded on its own
// (search.Engine.EmbedDocuments).
// A paper's sentences are those of papersearch.Sentences(abstract), in
// order, at most MaxSentences.
type Sentence struct {
	Role   roles.Role
	Vector []float32
}

// MaxSentences bounds the sentences of one abstract that get a vector (and
// that explanations consider); an abstract's later sentences have none.
const MaxSentences = 24
