package embed

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
)

// Role is what a text is embedded as: a document to be found, or a search
// query. Some models were trained to see each role introduced by its own
// instruction.
type Role int

const (
	Document Role = iota
	Query
)

// Instructions are the texts a model was trained to see before a search
// query and before a document ("" for none).
type Instructions struct {
	Query, Document string
}

// InstructionsFor returns a model's instructions: for bge-small-en-v1.5
// "Represent this sentence for searching relevant passages: " before
// queries and nothing before documents, for e5-small-v2 "query: " and
// "passage: ", none for all-MiniLM-L6-v2 or a model it does not know,
// looked up by ModelKey.
func InstructionsFor(model string) Instructions {
	switch ModelKey(model) {
	case "bge-small-en-v1.5":
		return Instructions{Query: "Represent this sentence for searching relevant passages: "}
	case "e5-small-v2":
		return Instructions{Query: "query: ", Document: "passage: "}
	}
	return Instructions{}
}

// ModelKey is what names a model when names are compared: the name's last
// part, in lower case, so that one spelled with an organisation
// ("BAAI/bge-small-en-v1.5", as embedding servers often spell it) and one
// without name the same model.
func ModelKey(name string) string { return strings.ToLower(path.Base(name)) }

func (in Instructions) of(r Role) string {
	if r == Query {
		return in.Query
	}
	return in.Document
}

// Instructed returns an embedder that embeds every text in role r: each
// text after its model's instruction for r, and for a Pair each model with
// its own. An embedder whose model has no instruction for r is returned as
// it is.
func Instructed(e Embedder, r Role) Embedder {
	if p, ok := e.(*Pair); ok {
		models := make([]Embedder, len(p.models))
		for i, m := range p.models {
			models[i] = Instructed(m, r)
		}
		return &Pair{models: models, info: p.info}
	}
	prefix := InstructionsFor(e.Info().Name).of(r)
	if prefix == "" {
		return e
	}
	return instructed{e, prefix}
}

// instructed puts prefix before every text it embeds.
type instructed struct {
	Embedder
	prefix string
}

func (in instructed) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return in.Embedder.Embed(ctx, in.prefixed(texts))
}

func (in instructed) CountTokens(texts []string) int {
	return CountTokens(in.Embedder, in.prefixed(texts))
}

// EmbedParts embeds texts in parts (see Local.EmbedParts) after the
// instruction, which is a part of its own whose vector is dropped. It
// fails with errors.ErrUnsupported unless the model embeds parts.
func (in instructed) EmbedParts(ctx context.Context, texts [][]string) ([][]float32, [][][]float32, error) {
	pe, ok := AsPartEmbedder(in.Embedder)
	if !ok {
		return nil, nil, fmt.Errorf("embed in parts with %s: %w", in.Info().Name, errors.ErrUnsupported)
	}
	prefixed := make([][]string, len(texts))
	for i, parts := range texts {
		prefixed[i] = append([]string{in.prefix}, parts...)
	}
	whole, parts, err := pe.EmbedParts(ctx, prefixed)
	if err != nil {
		return nil, nil, err
	}
	for i := range parts {
		parts[i] = parts[i][1:]
	}
	return whole, parts, nil
}

// prefixed returns the texts as the model sees them.
func (in instructed) prefixed(texts []string) []string {
	t := make([]string, len(texts))
	for i, x := range texts {
		t[i] = in.prefix + x
	}
	return t
}
