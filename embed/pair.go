package embed

import (
	"context"
	"errors"
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
	out := make([][]float32, len(texts))
	for i := range texts {
		v, err := p.join(va[i], vb[i])
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// join returns the pair's vector of the two models' unit vectors a and b.
func (p *Pair) join(a, b []float32) ([]float32, error) {
	da, dim := p.a.Info().Dim, p.info.Dim
	if len(a) != da || len(b) != dim-da {
		return nil, fmt.Errorf("embed with %s: %w: vectors of %d and %d dimensions, want %d in all", p.info.Name, ErrBadResponse, len(a), len(b), dim)
	}
	scale := float32(1 / math.Sqrt2)
	v := make([]float32, dim)
	for j, x := range a {
		v[j] = x * scale
	}
	for j, x := range b {
		v[da+j] = x * scale
	}
	return v, nil
}

// EmbedParts embeds texts in parts (see Local.EmbedParts) with both models
// at once and joins the vectors; a part either model's window cuts off has
// a nil vector. It fails with errors.ErrUnsupported unless both models
// embed parts.
func (p *Pair) EmbedParts(ctx context.Context, texts [][]string) ([][]float32, [][][]float32, error) {
	pa, okA := AsPartEmbedder(p.a)
	pb, okB := AsPartEmbedder(p.b)
	if !okA || !okB {
		return nil, nil, fmt.Errorf("embed in parts with %s: %w", p.info.Name, errors.ErrUnsupported)
	}
	var wa, wb [][]float32
	var sa, sb [][][]float32
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { wa, sa, err = pa.EmbedParts(gctx, texts); return err })
	g.Go(func() (err error) { wb, sb, err = pb.EmbedParts(gctx, texts); return err })
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	whole := make([][]float32, len(texts))
	parts := make([][][]float32, len(texts))
	for i := range texts {
		v, err := p.join(wa[i], wb[i])
		if err != nil {
			return nil, nil, err
		}
		whole[i] = v
		parts[i] = make([][]float32, len(texts[i]))
		for j := range parts[i] {
			if sa[i][j] == nil || sb[i][j] == nil {
				continue
			}
			if parts[i][j], err = p.join(sa[i][j], sb[i][j]); err != nil {
				return nil, nil, err
			}
		}
	}
	return whole, parts, nil
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
