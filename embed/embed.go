// Package embed turns text into dense vectors. Every provider implements
// Embedder; the in-process model (NewLocal) needs no network.
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
