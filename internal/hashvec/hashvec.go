// Package hashvec makes deterministic pseudo-random unit vectors, for
// benchmarks and tests that measure a store rather than a model.
package hashvec

import (
	"context"
	"hash/fnv"
	"math/rand/v2"

	"github.com/papersearch/papersearch/embed"
)

// Of returns a deterministic pseudo-random unit vector of dim
// dimensions seeded by key. Benchmarks and load tests give papers such
// vectors when the store, not the model, is what they measure.
func Of(key string, dim int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(key))
	r := rand.New(rand.NewPCG(h.Sum64(), 0x9e3779b97f4a7c15))
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	embed.Normalize(v)
	return v
}

// Embedder is an embed.Embedder that gives each text its vector Of the
// text: a stand-in for a model when a store is measured, never in the
// product.
type Embedder struct{ Model embed.ModelInfo }

// Info returns the model the vectors pretend to come from.
func (e Embedder) Info() embed.ModelInfo { return e.Model }

// Embed returns each text's vector.
func (e Embedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = Of(t, e.Model.Dim)
	}
	return out, nil
}
