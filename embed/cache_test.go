package embed

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

// TestCacheKeepsPrecisionsApart: one cache file serves a model in float32
// and in int8, each its own vectors, and gives them back after reopening.
func TestCacheKeepsPrecisionsApart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.db")
	text := []string{"graph neural networks for molecules"}
	want := map[Precision][]float32{}
	for _, p := range []Precision{PrecisionFP32, PrecisionInt8, PrecisionFP32, PrecisionInt8} {
		m, err := NewLocalModel("all-MiniLM-L6-v2", LocalOptions{Precision: p})
		if err != nil {
			t.Fatal(err)
		}
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
