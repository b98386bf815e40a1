package eval

import (
	"math"
	"testing"

	"github.com/papersearch/papersearch"
)

// coverage weighs the query terms a paper holds by their query weight,
// counts its title's apart, and finds the query's adjacent pairs.
func TestCoverage(t *testing.T) {
	p := papersearch.Paper{Title: "Graph kernels", Abstract: "We compare random walk kernels on molecules."}
	weight := map[string]float64{"graph": 2, "random": 1, "walk": 1, "protein": 4}
	pairs := [][2]string{{"random", "walk"}, {"walk", "graph"}}
	text, title, adjacent := coverage(p, weight, pairs, 10)
	if math.Abs(text-0.4) > 1e-12 || math.Abs(title-0.2) > 1e-12 || adjacent != 0.5 {
		t.Errorf("coverage %.3f, title %.3f, pairs %.3f; want 0.4, 0.2, 0.5", text, title, adjacent)
	}
	if _, _, adjacent := coverage(p, weight, nil, 10); adjacent != 0 {
		t.Errorf("no pairs: %.3f", adjacent)
	}
}
