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
	return p.EmbedModels(ctx, texts, 0, len(p.models))
}

// EmbedModels embeds texts with the models from up to (not including) to
// at once and returns the pair's vectors with the other models' parts
// zero: vectors of the pair's dimension whose sum over models that cover
// all of them, one range each, is Embed's vector bit for bit. A question
// compared by some of the models costs the others nothing (a search's
// model gate). from and to are clamped to the models there are.
func (p *Pair) EmbedModels(ctx context.Context, texts []string, from, to int) ([][]float32, error) {
	from, to = max(from, 0), min(to, len(p.models))
	vs := make([][][]float32, len(p.models))
	g, gctx := errgroup.WithContext(ctx)
	for i := from; i < to; i++ {
		g.Go(func() (err error) {
			vs[i], err = p.models[i].Embed(gctx, texts)
			if err == nil && len(vs[i]) != len(texts) {
				err = fmt.Errorf("embed with %s: %w: %d vectors for %d texts", p.models[i].Info().Name, ErrBadResponse, len(vs[i]), len(texts))
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i := range texts {
		v, err := p.join(from, to, func(m int) []float32 { return vs[m][i] })
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// join returns the pair's vector of the models' unit vectors, part(m)
// being model m's for the models from up to to; the others' dimensions
// are zero.
func (p *Pair) join(from, to int, part func(m int) []float32) ([]float32, error) {
	scale := float32(1 / math.Sqrt(float64(len(p.models))))
	v := make([]float32, 0, p.info.Dim)
	for m, model := range p.models {
		if m < from || m >= to {
			v = append(v, make([]float32, model.Info().Dim)...)
			continue
		}
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
		v, err := p.join(0, len(p.models), func(m int) []float32 { return wholes[m][i] })
		if err != nil {
			return nil, nil, err
		}
		whole[i] = v
		out[i] = make([][]float32, len(texts[i]))
		for j := range out[i] {
			if parts[0][i][j] == nil { // every model's window cut it off
				continue
			}
			if out[i][j], err = p.join(0, len(p.models), func(m int) []float32 { return parts[m][i][j] }); err != nil {
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
