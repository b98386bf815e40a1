package embedding

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/storage"
)

// Documents embeds each document's text and its abstract's sentences
// with the index's model, as queries are compared with them,
// labels the sentences' roles, and fills Vector and Sentences: in one pass
// per paper when the model can pool sentence vectors, else in one request
// of texts and sentences. While the embedder is found failing it is
// refused at once with an error wrapping ErrUnavailable (see
// Options.BreakerCooldown). It is how the catalog embeds what it stores,
// and how an aspect query's paper given as text is embedded.
func (m *Models) Documents(ctx context.Context, docs []*storage.Document) error {
	return m.breaker.wait(ctx, func() error {
		if m.inContext != nil {
			return m.embedInContext(ctx, docs)
		}
		return m.embedTogether(ctx, docs)
	})
}

// embedTogether embeds the documents' texts and sentences in one request.
func (m *Models) embedTogether(ctx context.Context, docs []*storage.Document) error {
	var texts []string
	sentences := make([][]string, len(docs))
	for i, d := range docs {
		texts = append(texts, d.Paper.Text())
		sentences[i] = storage.Sentences(d.Paper)
		texts = append(texts, sentences[i]...)
	}
	vecs, err := m.docs.Embed(ctx, texts)
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
		d.Sentences = make([]storage.Sentence, len(sentences[i]))
		for j, r := range m.roles.Label(sentences[i]) {
			d.Sentences[j] = storage.Sentence{Role: r, Vector: vecs[next]}
			next++
		}
	}
	return nil
}

// embedInContext embeds each document's text in parts, its head (the
// title Text puts before the abstract) and then every abstract sentence,
// keeping the pooled vectors of the first MaxSentences sentences. A
// sentence past the model's window is embedded on its own.
func (m *Models) embedInContext(ctx context.Context, docs []*storage.Document) error {
	texts := make([][]string, len(docs))
	for i, d := range docs {
		abstract := strings.TrimSpace(d.Paper.Abstract)
		head := strings.TrimSuffix(d.Paper.Text(), abstract)
		texts[i] = append([]string{head}, papersearch.Sentences(abstract)...)
	}
	start := time.Now()
	whole, parts, err := m.inContext.EmbedParts(ctx, texts)
	if m.observe != nil {
		m.observe(OpEmbed, time.Since(start), err)
	}
	if err == nil {
		err = checkDimensions(m.inContext.Info(), whole)
	}
	if err != nil {
		return err
	}
	if len(whole) != len(docs) || len(parts) != len(docs) {
		return fmt.Errorf("the embedder returned %d vectors for %d texts", len(whole), len(docs))
	}
	type place struct{ doc, sentence int }
	var alone []string
	var places []place
	for i, d := range docs {
		sentences := texts[i][1:min(len(texts[i]), storage.MaxSentences+1)]
		d.Vector = whole[i]
		d.Sentences = make([]storage.Sentence, len(sentences))
		for j, r := range m.roles.Label(sentences) {
			d.Sentences[j] = storage.Sentence{Role: r, Vector: parts[i][j+1]}
			if d.Sentences[j].Vector == nil {
				alone = append(alone, sentences[j])
				places = append(places, place{i, j})
			}
		}
	}
	if len(alone) == 0 {
		return nil
	}
	vecs, err := m.docs.Embed(ctx, alone)
	if err != nil {
		return err
	}
	if len(vecs) != len(alone) {
		return fmt.Errorf("the embedder returned %d vectors for %d texts", len(vecs), len(alone))
	}
	for k, p := range places {
		docs[p.doc].Sentences[p.sentence].Vector = vecs[k]
	}
	return nil
}
