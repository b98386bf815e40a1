package bench

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/hashvec"
)

// TestTimedKeepsParts: the timed embedder embeds parts in one pass exactly
// when the model does, with the model's vectors, and counts the time.
func TestTimedKeepsParts(t *testing.T) {
	m, err := embed.NewLocalModel("all-MiniLM-L6-v2", embed.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var spent atomic.Int64
	pe, ok := timed(m, &spent).(embed.PartEmbedder)
	if !ok {
		t.Fatal("timed(local model) is not a PartEmbedder: the engine would embed each sentence apart")
	}
	texts := [][]string{{"Graph networks for molecules.", "We predict binding energies."}}
	whole, parts, err := pe.EmbedParts(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	wantWhole, wantParts, err := m.EmbedParts(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(whole[0], wantWhole[0]) || !slices.Equal(parts[0][1], wantParts[0][1]) {
		t.Error("timed EmbedParts differs from the model's")
	}
	if spent.Load() <= 0 {
		t.Error("time spent in EmbedParts not counted")
	}
	if _, ok := timed(hashvec.Embedder{Model: m.Info()}, &spent).(embed.PartEmbedder); ok {
		t.Error("timed(hash vectors) claims to embed parts")
	}
}
