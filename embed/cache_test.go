package embed

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCacheKeepsPrecisionsApart: one cache file serves a model in float32
// and in int8, each its own vectors, and gives them back after reopening.
func TestCacheKeepsPrecisionsApart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.db")
	text := []string{"graph neural networks for molecules"}
	want := map[Precision][]float32{}
	plans := map[Precision]*measurement{} // a precision's second model takes its first's plan, as a machine's record makes it
	for _, p := range []Precision{PrecisionFP32, PrecisionInt8, PrecisionFP32, PrecisionInt8} {
		m, err := NewLocalModel("all-MiniLM-L6-v2", LocalOptions{Precision: p, measured: plans[p]})
		if err != nil {
			t.Fatal(err)
		}
		plans[p] = &measurement{shape: m.model.shape(), rates: m.Choice().Measured}
		c, err := NewCache(m, path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Embed(context.Background(), text)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		direct, err := m.Embed(context.Background(), text)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got[0], direct[0]) {
			t.Errorf("%s: the cache gave another precision's vector", p)
		}
		if w, ok := want[p]; ok && !slices.Equal(got[0], w) {
			t.Errorf("%s: reopened, the cache gave another vector", p)
		}
		want[p] = got[0]
	}
	if slices.Equal(want[PrecisionFP32], want[PrecisionInt8]) {
		t.Error("float32 and int8 vectors are identical: the test proves nothing")
	}
}

// TestCacheEmbedsParts: a cache over a local model embeds parts as the
// model does (so an engine keeps embedding a paper and its sentences in
// one pass), gives the same vectors back from the file after reopening,
// part cut off by the window included, and is no PartEmbedder over an
// embedder that has no parts.
func TestCacheEmbedsParts(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cache.db")
	m, err := NewLocalModel("all-MiniLM-L6-v2", LocalOptions{Precision: PrecisionFP32})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a sentence that goes on and on ", 100)
	texts := [][]string{{"Graph networks.", "They predict molecules."}, {"Title.", long, "Cut off."}}
	wantWhole, wantParts, err := m.EmbedParts(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	if wantParts[1][2] != nil {
		t.Fatal("the last part of the long text was not cut off: the test proves less than it says")
	}
	for round := range 2 { // embedding, then from the file
		c, err := NewCache(m, path)
		if err != nil {
			t.Fatal(err)
		}
		pe, ok := AsPartEmbedder(c)
		if !ok {
			t.Fatal("a cache over a local model is no PartEmbedder")
		}
		whole, parts, err := pe.EmbedParts(ctx, texts)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		for i := range texts {
			if !slices.Equal(whole[i], wantWhole[i]) || len(parts[i]) != len(wantParts[i]) {
				t.Fatalf("round %d, text %d: another whole vector or %d parts", round, i, len(parts[i]))
			}
			for j := range parts[i] {
				if !slices.Equal(parts[i][j], wantParts[i][j]) || (parts[i][j] == nil) != (wantParts[i][j] == nil) {
					t.Errorf("round %d, text %d, part %d differs", round, i, j)
				}
			}
		}
	}
	if _, ok := AsPartEmbedder(&Cache{inner: &fixed{name: "fixed", v: []float32{1}}}); ok {
		t.Error("a cache over an embedder without parts claims parts")
	}
}

// TestCacheKeyNamesEveryArithmetic: choices whose vectors differ in any
// product's arithmetic (dense, feed-forward output, attention) have keys
// of their own; float32 throughout keeps the empty key of older caches.
func TestCacheKeyNamesEveryArithmetic(t *testing.T) {
	choices := []Choice{
		{Precision: PrecisionFP32},
		{Precision: PrecisionFP32, AttentionPrecision: PrecisionBF16},
		{Precision: PrecisionBF16},
		{Precision: PrecisionBF16, AttentionPrecision: PrecisionBF16},
		{Precision: PrecisionInt8},
		{Precision: PrecisionInt8, AttentionPrecision: PrecisionBF16},
		{Precision: PrecisionInt8, FFNOut: PrecisionBF16},
		{Precision: PrecisionInt8, FFNOut: PrecisionBF16, AttentionPrecision: PrecisionBF16},
	}
	seen := map[string]Choice{}
	for _, c := range choices {
		k := c.cacheKey()
		if other, ok := seen[k]; ok {
			t.Errorf("%+v and %+v share the key %q", c, other, k)
		}
		seen[k] = c
	}
	if k := choices[0].cacheKey(); k != "" {
		t.Errorf("float32 throughout: key %q, want the empty key", k)
	}
}
