// Package embed turns text into dense vectors. Every provider implements
// Embedder; the in-process model (NewLocal) needs no network.
package embed

import (
	"context"
	"errors"
	"path"
	"strings"
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

// QueryInstruction returns the text a model was trained to see before a
// search query (documents never get one), or "" when it has none: for
// bge-small-en-v1.5 "Represent this sentence for searching relevant
// passages: ", which measured better than bare queries on both of the
// project's dev signals (docs/ranking.md). A name with an organisation
// ("BAAI/bge-small-en-v1.5", as embedding servers often spell it) is
// looked up by its last part.
func QueryInstruction(model string) string {
	switch strings.ToLower(path.Base(model)) {
	case "bge-small-en-v1.5":
		return "Represent this sentence for searching relevant passages: "
	}
	return ""
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
