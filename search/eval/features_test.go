package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/eval"
	"github.com/papersearch/papersearch/search/searchtest"
)

// TestEvalFeatures: for each judged question the second stage's features
// of its first fused candidates are written, one vector per candidate of
// as many values as the features' names, with the judged papers; an
// unjudged question is skipped and one with no words on either side
// writes no candidates.
func TestEvalFeatures(t *testing.T) {
	ctx := context.Background()
	eng, _ := searchtest.Engine(t, hashvec.Embedder{Model: embed.ModelInfo{Name: "test-model", Dim: 32}}, search.Options{})
	papers := []papersearch.Paper{
		{ID: "a", Title: "Protein folding with graph networks", Abstract: "We predict protein structures from sequences with graph networks."},
		{ID: "b", Title: "Speech recognition", Abstract: "Transformers transcribe speech audio into text."},
		{ID: "c", Title: "Graph networks for molecules", Abstract: "Molecular property prediction with message passing graph networks."},
	}
	if _, err := catalog.New(eng, catalog.Options{}).Ingest(ctx, papers, nil); err != nil {
		t.Fatal(err)
	}
	queries := []eval.EvalQuery{{ID: "q1", Text: "graph networks for proteins"}, {ID: "q2", Text: "unjudged question"}}
	var out bytes.Buffer
	if err := eval.Features(ctx, eng, queries, eval.Qrels{"q1": {"a": 1}}, nil, &out); err != nil {
		t.Fatal(err)
	}
	type line struct {
		ID         string            `json:"id"`
		Relevant   map[string]int    `json:"relevant"`
		Candidates []json.RawMessage `json:"candidates"`
		Names      []string          `json:"names"`
		X          [][]float64       `json:"x"`
	}
	var lines []line
	for dec := json.NewDecoder(&out); dec.More(); {
		var l line
		if err := dec.Decode(&l); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	if len(lines) != 1 || lines[0].ID != "q1" || lines[0].Relevant["a"] != 1 {
		t.Fatalf("lines: %+v", lines)
	}
	l := lines[0]
	if len(l.Candidates) == 0 || len(l.X) != len(l.Candidates) {
		t.Fatalf("%d candidates, %d vectors", len(l.Candidates), len(l.X))
	}
	for i, x := range l.X {
		if len(x) != len(l.Names) {
			t.Errorf("candidate %d: %d values for %d names", i, len(x), len(l.Names))
		}
	}
}
