package embed

import (
	"context"
	"errors"
)

// Embedder turns texts into unit-length vectors whose dot product is their
// cosine similarity, in [-1, 1].
type Embedder interface {
	// Embed returns one vector per text, in the order of texts, each of
	// length Info().Dim.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Info names the model and its output dimension.
	Info() ModelInfo
}

// ModelInfo identifies the vectors a model produces. Vectors of two
// different ModelInfos must never be compared.
type ModelInfo struct {
	Name string `json:"model"`
	Dim  int    `json:"dim"`
}

// ErrEmptyInput is returned when there is nothing to embed.
var ErrEmptyInput = errors.New("no text to embed")

// PartEmbedder is implemented by embedders that can embed a text given as
// consecutive parts in one pass and pool a vector for each part from the
// tokens it spans, in the context of the whole text.
type PartEmbedder interface {
	Embedder
	// EmbedParts returns, for each text (its parts joined by spaces), the
	// text's vector as Embed gives it and a unit vector for each part; a
	// part the model's window cuts off has a nil vector.
	EmbedParts(ctx context.Context, texts [][]string) ([][]float32, [][][]float32, error)
}

// AsPartEmbedder returns e as a PartEmbedder when it can embed parts: a
// local model, with or without its instructions or a cache, or a pair of
// them.
func AsPartEmbedder(e Embedder) (PartEmbedder, bool) {
	switch e := e.(type) {
	case *Local:
		return e, true
	case instructed:
		if _, ok := AsPartEmbedder(e.Embedder); ok {
			return e, true
		}
	case *Pair:
		for _, m := range e.models {
			if _, ok := AsPartEmbedder(m); !ok {
				return nil, false
			}
		}
		return e, true
	case *Cache:
		if _, ok := AsPartEmbedder(e.inner); ok {
			return e, true
		}
	case PartEmbedder:
		return e, true // embeds parts itself
	}
	return nil, false
}

// TokenCounter is implemented by embedders that can count the tokens a
// text costs them exactly.
type TokenCounter interface {
	CountTokens(texts []string) int
}

// CountTokens returns the tokens texts cost e: exact when e counts them,
// else estimated.
func CountTokens(e Embedder, texts []string) int {
	if tc, ok := e.(TokenCounter); ok {
		return tc.CountTokens(texts)
	}
	n := 0
	for _, t := range texts {
		n += EstimateTokens(t)
	}
	return n
}
