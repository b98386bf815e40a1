package eval_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/eval"
)

// Overlap counts a query's distinct content words, stemmed, that a text
// holds: function words and stop words are not content.
func TestOverlap(t *testing.T) {
	text := "We train convolutional networks to segment retinal images."
	for _, c := range []struct {
		query string
		want  float64
	}{
		{"segmenting retina pictures with networks", 0.5}, // segment and network of segment, retina, pictur, network
		{"How can I segment images?", 1},                  // "how", "can", "i" are not content words
		{"what is it", 1},                                 // no content word at all
		{"graph kernels", 0},
		{"Network networks NETWORK kernel", 0.5}, // distinct terms: network, kernel
	} {
		if got := eval.Overlap(c.query, text); !near(got, c.want) {
			t.Errorf("Overlap(%q) = %.3f, want %.3f", c.query, got, c.want)
		}
	}
	if got := eval.Overlap("graph kernels", text, "Graph kernels compared."); got != 1 {
		t.Errorf("overlap with the best of two texts = %.3f, want 1", got)
	}
	for o, band := range map[float64]string{0: eval.BandLow, 0.39: eval.BandLow, 0.4: eval.BandMid, 0.6: eval.BandMid, 0.61: eval.BandHigh, 1: eval.BandHigh} {
		for _, b := range eval.Bands() {
			if want := b == band || b == eval.BandAll; eval.InBand(o, b) != want {
				t.Errorf("InBand(%.2f, %s) = %v", o, b, !want)
			}
		}
	}
}

// The held-out split is fixed by the id and close to half of any set.
func TestHeldOut(t *testing.T) {
	n := 0
	for i := range 2000 {
		id := fmt.Sprintf("q%d", i)
		if eval.HeldOut(id) != eval.HeldOut(id) {
			t.Fatal("the split is not a function of the id")
		}
		if eval.HeldOut(id) {
			n++
		}
	}
	if n < 900 || n > 1100 {
		t.Errorf("%d of 2000 queries held out, want about half", n)
	}
}

// Summarize's paired difference and standard error, against values
// computed by hand.
func TestSummarize(t *testing.T) {
	base := eval.Run{Mode: "hybrid", Outcomes: []eval.Outcome{
		{ID: "a", RR: 1, NDCG10: 1}, {ID: "b", RR: 0.5, NDCG10: 0.6}, {ID: "c", RR: 0, NDCG10: 0}, {ID: "d", RR: 1, NDCG10: 1, Overlap: 0.9},
	}}
	cand := eval.Run{Mode: "hybrid", Outcomes: []eval.Outcome{
		{ID: "a", RR: 1, NDCG10: 1}, {ID: "b", RR: 1, NDCG10: 1}, {ID: "c", RR: 1, NDCG10: 1}, {ID: "d", RR: 0.5, NDCG10: 0.6, Overlap: 0.9},
	}}
	s := eval.Summarize(cand, &base, func(eval.Outcome) bool { return true })
	// First: 1,1,1,0 against 1,0,0,1: differences 0,1,1,-1, mean 0.25,
	// sample variance (0.0625+0.5625·2+1.5625)/3 = 0.916667, SE = sqrt(0.916667/4).
	if s.Queries != 4 || !near(s.First, 0.75) || !near(s.Delta.First, 0.25) || !near(s.DeltaSE.First, math.Sqrt(0.916667/4)) {
		t.Errorf("first %.3f Δ %.4f ± %.4f over %d", s.First, s.Delta.First, s.DeltaSE.First, s.Queries)
	}
	if !near(s.Top10, 1) || !near(s.Delta.Top10, 0.25) {
		t.Errorf("top 10 %.3f Δ %.3f", s.Top10, s.Delta.Top10)
	}
	low := eval.Summarize(cand, &base, func(o eval.Outcome) bool { return eval.InBand(o.Overlap, eval.BandLow) })
	if low.Queries != 3 || !near(low.Delta.MRR10, 0.5) {
		t.Errorf("low band: %d queries, Δ MRR %.3f", low.Queries, low.Delta.MRR10)
	}
	if self := eval.Summarize(base, &base, func(eval.Outcome) bool { return true }); self.Delta.NDCG10 != 0 || self.DeltaSE.NDCG10 != 0 {
		t.Errorf("a run against itself differs: %+v", self.Delta)
	}
}

// Titles as queries: each title finds its own paper, which loses its
// title.
func TestTitleQueries(t *testing.T) {
	papers := []papersearch.Paper{{ID: "p1", Title: "Graph kernels", Abstract: "We compare graph kernels."}, {ID: "p2", Abstract: "No title."}}
	queries, qrels := eval.TitleQueries(papers)
	if len(queries) != 1 || queries[0].Text != "Graph kernels" || qrels[queries[0].ID]["p1"] != 1 || len(qrels) != 1 {
		t.Fatalf("queries %+v, qrels %v", queries, qrels)
	}
	if papers[0].Title != "" || papers[0].Text() != "We compare graph kernels." {
		t.Errorf("the paper keeps its title: %q", papers[0].Text())
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-5 }
