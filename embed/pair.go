package embed

import (
	"context"
	"fmt"
	"math"
	"strings"

	"golang.org/x/sync/errgroup"
)

// Pair is two models used as one: a text's vector is the two models' unit
// vectors, each scaled by 1/√2, one after the other, so the dot product of
// two Pair vectors is the mean of the two models' cosines. Each model keeps
// its own instructions (see Instructed). Its name joins the models' names
// with "+".
type Pair struct {
	a, b Embedder
	info ModelInfo
}

// NewPair combines two embedders.
func NewPair(a, b Embedder) *Pair {
	ia, ib := a.Info(), b.Info()
	return &Pair{a: a, b: b, info: ModelInfo{Name: ia.Name + "+" + ib.Name, Dim: ia.Dim + ib.Dim}}
}

// Parts returns the two embedders.
func (p *Pair) Parts() (Embedder, Embedder) { return p.a, p.b }

// Info names the pair and its dimension, the sum of the two.
func (p *Pair) Info() ModelInfo { return p.info }

// Embed embeds texts with both models at once and joins the vectors.
func (p *Pair) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	var va, vb [][]float32
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { va, err = p.a.Embed(gctx, texts); return err })
	g.Go(func() (err error) { vb, err = p.b.Embed(gctx, texts); return err })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	da, dim := p.a.Info().Dim, p.info.Dim
	scale := float32(1 / math.Sqrt2)
	flat := make([]float32, len(texts)*dim)
	out := make([][]float32, len(texts))
	for i := range texts {
		v := flat[i*dim : (i+1)*dim : (i+1)*dim]
		if len(va[i]) != da || len(vb[i]) != dim-da {
			return nil, fmt.Errorf("embed with %s: %w: vectors of %d and %d dimensions, want %d in all", p.info.Name, ErrBadResponse, len(va[i]), len(vb[i]), dim)
		}
		for j, x := range va[i] {
			v[j] = x * scale
		}
		for j, x := range vb[i] {
			v[da+j] = x * scale
		}
		out[i] = v
	}
	return out, nil
}

// CountTokens is what the texts cost both models.
func (p *Pair) CountTokens(texts []string) int {
	return CountTokens(p.a, texts) + CountTokens(p.b, texts)
}

// OpenLocal loads a local model by name: one of LocalModels, or two of them
// joined by "+" as a Pair.
func OpenLocal(name string, opts LocalOptions) (Embedder, error) {
	first, second, ok := strings.Cut(name, "+")
	if !ok {
		return NewLocalModel(name, opts)
	}
	a, err := NewLocalModel(first, opts)
	if err != nil {
		return nil, err
	}
	b, err := NewLocalModel(second, opts)
	if err != nil {
		return nil, err
	}
	return NewPair(a, b), nil
}
