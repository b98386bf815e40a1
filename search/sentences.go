package search

import (
	"context"
	"fmt"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/roles"
)

// Sentence is one sentence of a paper's abstract as a store keeps it: its
// rhetorical role and the unit vector of its text, embedded on its own.
// A paper's sentences are those of papersearch.Sentences(abstract), in
// order, at most MaxSentences.
type Sentence struct {
	Role   roles.Role
	Vector []float32
}

// MaxSentences bounds the sentences of one abstract that get a vector (and
// that explanations consider); an abstract's later sentences have none.
const MaxSentences = 24

// abstractSentences returns the sentences of p's abstract that get vectors.
func abstractSentences(p papersearch.Paper) []string {
	ss := papersearch.Sentences(p.Abstract)
	return ss[:min(len(ss), MaxSentences)]
}

// embedWithSentences embeds each document's text and its abstract's
// sentences in one request, labels the sentences' roles, and fills
// Vector and Sentences.
func (e *Engine) embedWithSentences(ctx context.Context, docs []*Document) error {
	var texts []string
	sentences := make([][]string, len(docs))
	for i, d := range docs {
		texts = append(texts, d.Paper.Text())
		sentences[i] = abstractSentences(d.Paper)
		texts = append(texts, sentences[i]...)
	}
	vecs, err := e.docs.Embed(ctx, texts)
	if err != nil {
		return err
	}
	if len(vecs) != len(texts) {
		return fmt.Errorf("the embedder returned %d vectors for %d texts", len(vecs), len(texts))
	}
	next := 0
	for i, d := range docs {
		d.Vector = vecs[next]
		next++
		d.Sentences = make([]Sentence, len(sentences[i]))
		for j, r := range e.roles.Label(sentences[i]) {
			d.Sentences[j] = Sentence{Role: r, Vector: vecs[next]}
			next++
		}
	}
	return nil
}
