package embedding_test

import (
	"context"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/searchtest"
	"github.com/papersearch/papersearch/search/storage"
)

// TestIngestPoolsSentenceVectors: with the in-process model, ingest stores
// each paper's vector as embedding its text gives it, and a vector for each
// abstract sentence pooled from the same pass: a unit vector nearer its
// own paper than the other (a pooled vector carries its paper's context:
// "It predicts structures twice as accurately" in a paper on graph
// networks for proteins lies nearer a sentence on graph networks than to
// itself embedded alone). A sentence past the model's window is embedded
// alone.
func TestIngestPoolsSentenceVectors(t *testing.T) {
	ctx := context.Background()
	model, err := embed.NewLocal(embed.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eng, store := searchtest.Engine(t, model, search.Options{})
	long := strings.Repeat("Graph neural networks pass messages between the nodes of a graph, "+
		strings.Repeat("layer after layer, ", 20)+"until every node knows its neighbourhood. ", 9)
	papers := []papersearch.Paper{
		{ID: "titled", Title: "Protein folding with graphs", Abstract: "Proteins fold into shapes that decide their function. " +
			"We train a graph network on residue contacts. It predicts structures twice as accurately as before."},
		{ID: "title-first", Title: "Sorting fast", Abstract: "Sorting fast is hard. We merge runs in place. It halves the time."},
		{ID: "long", Title: "Long", Abstract: "Birds migrate south in winter. " + long + "Rockets burn hydrogen."},
	}
	if _, err := catalog.New(eng, catalog.Options{}).Ingest(ctx, papers, nil); err != nil {
		t.Fatal(err)
	}
	docs := embed.Instructed(model, embed.Document)
	stored, err := store.Sentences(ctx, []string{"titled", "title-first", "long"})
	if err != nil {
		t.Fatal(err)
	}
	alone := map[string][][]float32{} // each paper's sentences embedded alone
	whole := map[string][]float32{}   // and its text
	for _, p := range papers {
		d, err := store.Get(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		sentences := papersearch.Sentences(p.Abstract)
		sentences = sentences[:min(len(sentences), storage.MaxSentences)]
		want, err := docs.Embed(ctx, append([]string{p.Text()}, sentences...))
		if err != nil {
			t.Fatal(err)
		}
		if c := embed.Dot(d.Vector, want[0]); c < 0.999 {
			t.Errorf("%s: the paper's vector has cosine %.4f with its text's", p.ID, c)
		}
		got := stored[p.ID]
		if len(got) != len(sentences) {
			t.Fatalf("%s: %d sentence vectors for %d sentences", p.ID, len(got), len(sentences))
		}
		alone[p.ID], whole[p.ID] = want[1:], want[0]
		for j, s := range got {
			if n := embed.Dot(s.Vector, s.Vector); n < 0.995 || n > 1.005 { // stored as int8 codes
				t.Errorf("%s sentence %d: norm² %.4f", p.ID, j, n)
			}
		}
	}
	for i, p := range papers[:2] {
		other := papers[1-i]
		for j, s := range stored[p.ID] {
			if own, theirs := embed.Dot(s.Vector, whole[p.ID]), embed.Dot(s.Vector, whole[other.ID]); own <= theirs {
				t.Errorf("%s sentence %d: cosine %.3f with its paper, %.3f with %s", p.ID, j, own, theirs, other.ID)
			}
		}
	}
	// The long abstract's last sentence (the 11th) lies past the 512-piece
	// window: embedded on its own, so its vector is the one embedding gives
	// it; its first is pooled.
	past := stored["long"]
	if c := embed.Dot(past[len(past)-1].Vector, alone["long"][len(past)-1]); len(past) != 11 || c < 0.999 {
		t.Errorf("a sentence past the window (of %d): cosine %.4f with it embedded alone, want ≥ 0.999", len(past), c)
	}
	if c := embed.Dot(past[0].Vector, alone["long"][0]); c > 0.99 {
		t.Errorf("the long abstract's first sentence: cosine %.4f with it embedded alone; pooled, it should differ", c)
	}
}
