package embed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// Pair is two (or more) models used as one: a text's vector is the
// models' unit vectors, each scaled by 1/√n for n models, one after the
// other, so the dot product of two Pair vectors is the mean of the models'
// cosines. Each model keeps its own instructions (see Instructed). Its
// name joins the models' names with "+".
type Pair struct {
	models []Embedder
	info   ModelInfo
}

// NewPair combines two or more embedders.
func NewPair(models ...Embedder) *Pair {
	names := make([]string, len(models))
	dim := 0
	for i, m := range models {
		info := m.Info()
		names[i], dim = info.Name, dim+info.Dim
	}
	return &Pair{models: models, info: ModelInfo{Name: strings.Join(names, "+"), Dim: dim}}
}

// Parts returns the embedders, in the order of their vectors' halves.
func (p *Pair) Parts() []Embedder { return p.models }

// Info names the pair and its dimension, the sum of the models'.
func (p *Pair) Info() ModelInfo { return p.info }

// Embed embeds texts with every model at once and joins the vectors.
func (p *Pair) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs := make([][][]float32, len(p.models))
	g, gctx := errgroup.WithContext(ctx)
	for i, m := range p.models {
		g.Go(func() (err error) { vs[i], err = m.Embed(gctx, texts); return err })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i := range texts {
		v, err := p.join(func(m int) []float32 { return vs[m][i] })
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// join returns the pair's vector of the models' unit vectors, part(m)
// being model m's.
func (p *Pair) join(part func(m int) []float32) ([]float32, error) {
	scale := float32(1 / math.Sqrt(float64(len(p.models))))
	v := make([]float32, 0, p.info.Dim)
	for m, model := range p.models {
		x := part(m)
		if m := model.Info(); len(x) != m.Dim {
			return nil, fmt.Errorf("embed with %s: %w: %w", p.info.Name, ErrBadResponse,
				&DimensionError{Model: m.Name, Got: len(x), Want: m.Dim})
		}
		for _, f := range x {
			v = append(v, f*scale)
		}
	}
	if len(v) != p.info.Dim {
		return nil, fmt.Errorf("embed with %s: %w: vectors of %d dimensions in all, want %d", p.info.Name, ErrBadResponse, len(v), p.info.Dim)
	}
	return v, nil
}

// EmbedParts embeds texts in parts (see Local.EmbedParts) with every model
// at once and joins the vectors. A part some models' windows cut off is
// embedded on its own by those models (the others keep their pooled
// vectors); a part every model's window cuts off has a nil vector. It fails with errors.ErrUnsupported unless every model
// embeds parts.
func (p *Pair) EmbedParts(ctx context.Context, texts [][]string) ([][]float32, [][][]float32, error) {
	pes := make([]PartEmbedder, len(p.models))
	for i, m := range p.models {
		pe, ok := AsPartEmbedder(m)
		if !ok {
			return nil, nil, fmt.Errorf("embed in parts with %s: %w", p.info.Name, errors.ErrUnsupported)
		}
		pes[i] = pe
	}
	wholes := make([][][]float32, len(p.models))
	parts := make([][][][]float32, len(p.models))
	g, gctx := errgroup.WithContext(ctx)
	for i, pe := range pes {
		g.Go(func() (err error) { wholes[i], parts[i], err = pe.EmbedParts(gctx, texts); return err })
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	if err := p.fillCut(ctx, texts, parts); err != nil {
		return nil, nil, err
	}
	whole := make([][]float32, len(texts))
	out := make([][][]float32, len(texts))
	for i := range texts {
		v, err := p.join(func(m int) []float32 { return wholes[m][i] })
		if err != nil {
			return nil, nil, err
		}
		whole[i] = v
		out[i] = make([][]float32, len(texts[i]))
		for j := range out[i] {
			if parts[0][i][j] == nil { // every model's window cut it off
				continue
			}
			if out[i][j], err = p.join(func(m int) []float32 { return parts[m][i][j] }); err != nil {
				return nil, nil, err
			}
		}
	}
	return whole, out, nil
}

// fillCut embeds on its own, with model m, each part texts[i][j] that
// m's window cut off (parts[m][i][j] nil) but another model's did not.
func (p *Pair) fillCut(ctx context.Context, texts [][]string, parts [][][][]float32) error {
	type place struct{ i, j int }
	for m, model := range p.models {
		var alone []string
		var places []place
		for i := range texts {
			for j := range texts[i] {
				if parts[m][i][j] != nil {
					continue
				}
				for o := range p.models {
					if parts[o][i][j] != nil {
						alone, places = append(alone, texts[i][j]), append(places, place{i, j})
						break
					}
				}
			}
		}
		if len(alone) == 0 {
			continue
		}
		vecs, err := model.Embed(ctx, alone)
		if err != nil {
			return err
		}
		if len(vecs) != len(alone) {
			return fmt.Errorf("embed with %s: %w: %d vectors for %d texts", model.Info().Name, ErrBadResponse, len(vecs), len(alone))
		}
		for k, pl := range places {
			parts[m][pl.i][pl.j] = vecs[k]
		}
	}
	return nil
}

// CountTokens is what the texts cost every model.
func (p *Pair) CountTokens(texts []string) int {
	n := 0
	for _, m := range p.models {
		n += CountTokens(m, texts)
	}
	return n
}

// OpenLocal loads a local model by name: one of LocalModels, or several of
// them joined by "+" as a Pair, whose kernels are all chosen from the
// first one's measurement when their shapes agree.
func OpenLocal(name string, opts LocalOptions) (Embedder, error) {
	names := strings.Split(name, "+")
	if len(names) == 1 {
		return NewLocalModel(name, opts)
	}
	models := make([]Embedder, len(names))
	busy := new(atomic.Int64) // the models share the cores
	for i, n := range names {
		m, err := NewLocalModel(n, opts)
		if err != nil {
			return nil, err
		}
		m.busy = busy
		if i == 0 {
			// One measurement decides for every model: they run on the same
			// CPU, and measured apart, timing noise could split them.
			opts.measured = m.model.measurement()
			opts.tokenizer = m.tok
		}
		models[i] = m
	}
	return NewPair(models...), nil
}
