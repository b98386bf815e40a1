package roles

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/papersearch/papersearch/internal/testenv"
)

func split(t *testing.T, name string) []Abstract {
	t.Helper()
	f, err := os.Open(filepath.Join(testenv.Shared(t, testenv.CSAbstructDir), name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set, err := ReadCSAbstruct(f)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestShippedWeights: the classifier in the binary labels CSAbstruct's
// test split as well as when it was trained (docs/ranking.md).
func TestShippedWeights(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	rep := Evaluate(c, split(t, "test"))
	t.Logf("test: %d sentences, accuracy %.4f, macro-F1 %.4f, F1 %v, lambda %.2f", rep.Sentences, rep.Accuracy, rep.MacroF1, rep.F1, c.lambda)
	if rep.Sentences != 1349 || rep.Accuracy < 0.79 || rep.MacroF1 < 0.75 {
		t.Errorf("test split: %d sentences, accuracy %.4f, macro-F1 %.4f; want 1349, ≥ 0.79, ≥ 0.75", rep.Sentences, rep.Accuracy, rep.MacroF1)
	}
}

// TestTrain: training from the splits gives the shipped classifier again
// (training is deterministic), and its weights survive encoding.
func TestTrain(t *testing.T) {
	c := Train(split(t, "train"), split(t, "dev"), TrainOptions{})
	b, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b, shipped) {
		t.Error("training again gives other weights than the shipped ones: run go generate ./search/roles")
	}
	var back Classifier
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if err := back.UnmarshalBinary(b[:len(b)-4]); err == nil {
		t.Error("truncated weights were read")
	}
}

func TestLabel(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	got := c.Label([]string{
		"Large language models are increasingly used to answer questions about scientific literature.",
		"However, they often hallucinate citations, which limits their usefulness.",
		"We propose a retrieval-augmented method that grounds every answer in passages retrieved from a paper index.",
		"We train the retriever with contrastive learning on citation pairs.",
		"Experiments on three benchmarks show that our method reduces hallucinated citations by 45% and improves accuracy by 6 points.",
	})
	want := []Role{Background, Background, Method, Method, Result}
	if !slices.Equal(got, want) {
		t.Errorf("Label = %v, want %v", got, want)
	}
	if c.Label(nil) != nil {
		t.Error("no sentences, some roles")
	}
	if Role(7).String() != "Role(7)" || Result.String() != "result" {
		t.Error("role names")
	}
}
