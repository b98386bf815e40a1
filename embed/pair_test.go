package embed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"
)

// fixed answers every text with the same unit vector, under a model name
// of the test's choosing, and keeps the texts it was given.
type fixed struct {
	name  string
	v     []float32
	mu    sync.Mutex
	texts []string
}

func (f *fixed) Info() ModelInfo { return ModelInfo{Name: f.name, Dim: len(f.v)} }

func (f *fixed) Embed(_ context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.texts = append(f.texts, texts...)
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = slices.Clone(f.v)
	}
	return out, nil
}

func TestPair(t *testing.T) {
	a := &fixed{name: "bge-small-en-v1.5", v: []float32{1, 0}}
	b := &fixed{name: "e5-small-v2", v: []float32{0, 0, 1}}
	p := NewPair(a, b)
	if got := p.Info(); got != (ModelInfo{Name: "bge-small-en-v1.5+e5-small-v2", Dim: 5}) {
		t.Errorf("Info = %+v", got)
	}
	v, err := p.Embed(context.Background(), []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	h := float32(1 / math.Sqrt2)
	if want := []float32{h, 0, 0, 0, h}; !slices.Equal(v[0], want) {
		t.Errorf("vector %v, want %v", v[0], want)
	}
	// Against a vector that agrees with the first model only, the cosine is
	// the mean of 1 and 0.
	if c := Dot(v[0], []float32{h, 0, h, 0, 0}); math.Abs(float64(c)-0.5) > 1e-6 {
		t.Errorf("cosine %v, want 0.5", c)
	}

	// Embed alone adds no instruction; Instructed gives each model its own.
	for _, r := range []Role{Document, Query} {
		if _, err := Instructed(p, r).Embed(context.Background(), []string{"graphs"}); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"x", "graphs", "Represent this sentence for searching relevant passages: graphs"}; !slices.Equal(a.texts, want) {
		t.Errorf("bge saw %q, want %q", a.texts, want)
	}
	if want := []string{"x", "passage: graphs", "query: graphs"}; !slices.Equal(b.texts, want) {
		t.Errorf("e5 saw %q, want %q", b.texts, want)
	}

	// A part that breaks its dimension is an error, not a short vector.
	bad := NewPair(a, &fixed{name: "x", v: []float32{1}})
	bad.info.Dim = 4
	if _, err := bad.Embed(context.Background(), []string{"x"}); !errors.Is(err, ErrBadResponse) {
		t.Errorf("wrong part dimension: %v", err)
	}
}

func TestOpenLocal(t *testing.T) {
	for name, dim := range map[string]int{"bge-small-en-v1.5+e5-small-v2": 768, "bge-small-en-v1.5+e5-small-v2+all-MiniLM-L6-v2": 1152} {
		e, err := OpenLocal(name, LocalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Info(); got.Dim != dim || got.Name != name {
			t.Errorf("Info = %+v", got)
		}
		// A paraphrase is closer than an unrelated sentence, as in each model.
		v, err := Instructed(e, Document).Embed(context.Background(), []string{
			"A cat sits on the mat.", "There is a cat sitting on a rug.", "Quarterly earnings rose by four percent."})
		if err != nil {
			t.Fatal(err)
		}
		if para, other := Dot(v[0], v[1]), Dot(v[0], v[2]); !(para > other+0.1) || math.Abs(float64(Dot(v[0], v[0]))-1) > 1e-5 {
			t.Errorf("%s: paraphrase %.3f, unrelated %.3f, self %.5f", name, para, other, Dot(v[0], v[0]))
		}
	}
	for _, name := range []string{"no-such-model+e5-small-v2", "bge-small-en-v1.5+no-such-model", "bge-small-en-v1.5+e5-small-v2+no-such-model"} {
		if _, err := OpenLocal(name, LocalOptions{}); !errors.Is(err, ErrUnknownModel) {
			t.Errorf("OpenLocal(%q): %v, want ErrUnknownModel", name, err)
		}
	}
}

// Three models weigh the same: each part is scaled by 1/√3.
func TestPairOfThree(t *testing.T) {
	a, b, c := &fixed{name: "a", v: []float32{1}}, &fixed{name: "b", v: []float32{0, 1}}, &fixed{name: "c", v: []float32{1}}
	p := NewPair(a, b, c)
	if got := p.Info(); got != (ModelInfo{Name: "a+b+c", Dim: 4}) || len(p.Parts()) != 3 {
		t.Errorf("Info = %+v, %d parts", got, len(p.Parts()))
	}
	v, err := p.Embed(context.Background(), []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	s := float32(1 / math.Sqrt(3))
	if want := []float32{s, 0, s, s}; !slices.Equal(v[0], want) {
		t.Errorf("vector %v, want %v", v[0], want)
	}
	if n := Dot(v[0], v[0]); math.Abs(float64(n)-1) > 1e-6 {
		t.Errorf("norm² %v, want 1", n)
	}
}

// TestPairEmbedModels: a range of the models embeds with those alone and
// gives their parts, the others zero, so ranges that cover the models add
// up to Embed's vectors bit for bit.
func TestPairEmbedModels(t *testing.T) {
	a, b, c := &fixed{name: "a", v: []float32{0.6, 0.8}}, &fixed{name: "b", v: []float32{0, 1, 0}}, &fixed{name: "c", v: []float32{0.28, 0.96}}
	p := NewPair(a, b, c)
	ctx := context.Background()
	whole, err := p.Embed(ctx, []string{"x", "y"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := p.EmbedModels(ctx, []string{"x", "y"}, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.texts) != 4 || len(b.texts) != 4 || len(c.texts) != 2 {
		t.Fatalf("texts embedded by each model: %d, %d, %d; want 4, 4, 2", len(a.texts), len(b.texts), len(c.texts))
	}
	last, err := p.EmbedModels(ctx, []string{"x", "y"}, 2, 9) // clamped to 3
	if err != nil {
		t.Fatal(err)
	}
	if len(a.texts) != 4 || len(b.texts) != 4 || len(c.texts) != 4 {
		t.Fatalf("texts embedded by each model: %d, %d, %d; want 4, 4, 4", len(a.texts), len(b.texts), len(c.texts))
	}
	for i := range whole {
		if z := first[i][5:]; !slices.Equal(z, []float32{0, 0}) {
			t.Errorf("text %d: the third model's part %v of the first two's vector, want zeros", i, z)
		}
		if z := last[i][:5]; !slices.Equal(z, make([]float32, 5)) {
			t.Errorf("text %d: the first two models' parts %v of the third's vector, want zeros", i, z)
		}
		sum := make([]float32, len(whole[i]))
		for j := range sum {
			sum[j] = first[i][j] + last[i][j]
		}
		if !slices.Equal(sum, whole[i]) {
			t.Errorf("text %d: the parts add up to %v, Embed gave %v", i, sum, whole[i])
		}
	}
}

// BenchmarkPairQuery is what a free-text search costs the default local
// models: one short query embedded by all three at once, each with its
// query instruction; p50-ms is the median call.
func BenchmarkPairQuery(b *testing.B) {
	p, err := OpenLocal(DefaultLocalModel, LocalOptions{})
	if err != nil {
		b.Fatal(err)
	}
	q := Instructed(p, Query)
	ctx := context.Background()
	var lat []float64
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if _, err := q.Embed(ctx, []string{fmt.Sprintf("graph neural networks for molecules %d", i)}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, float64(time.Since(start).Microseconds())/1000)
	}
	slices.Sort(lat)
	b.ReportMetric(lat[len(lat)/2], "p50-ms")
}
