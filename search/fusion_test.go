package search

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/papersearch/papersearch/search/storage"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-5 }

// Fusion, against rankings computed by hand.
func TestFusion(t *testing.T) {
	dense := []storage.Candidate{{ID: "A", Score: 0.9}, {ID: "B", Score: 0.5}, {ID: "C", Score: 0.1}}
	lexical := storage.Matches{Candidates: []storage.Candidate{{ID: "C", Score: 10}, {ID: "A", Score: 6}, {ID: "D", Score: 2}}}
	ids := func(fs []Fused) string {
		var s []string
		for _, f := range fs {
			s = append(s, f.ID)
		}
		return strings.Join(s, ",")
	}
	// RRF: A = 1/61 + 1/62, C = 1/63 + 1/61, B = 1/62, D = 1/63.
	rrf := fuse(dense, lexical, Fusion{Method: RRF})
	if got := ids(rrf); got != "A,C,B,D" {
		t.Errorf("RRF order %s, want A,C,B,D", got)
	}
	if !near(rrf[0].Score, 1.0/61+1.0/62) || rrf[0].DenseRank != 1 || rrf[0].LexicalRank != 2 || rrf[3].DenseRank != 0 {
		t.Errorf("RRF first %+v, last %+v", rrf[0], rrf[3])
	}
	// Weighted 0.5: dense normalised A=1, B=0.5, C=0; lexical C=1, A=0.5, D=0.
	// A = 0.75, C = 0.5, B = 0.25, D = 0.
	w := fuse(dense, lexical, Fusion{Method: Weighted, DenseWeight: 0.5})
	if got := ids(w); got != "A,C,B,D" || !near(w[0].Score, 0.75) || !near(w[1].Score, 0.5) {
		t.Errorf("weighted 0.5: %s %+v", got, w)
	}
	// Weighted 0.8: A = 0.9, B = 0.4, C = 0.2, D = 0.
	w = fuse(dense, lexical, Fusion{Method: Weighted, DenseWeight: 0.8})
	if got := ids(w); got != "A,B,C,D" || !near(w[1].Score, 0.4) {
		t.Errorf("weighted 0.8: %s %+v", got, w)
	}
	// Max-normalised 0.5: dense A=1, B=0.6, C=0.2 (scores 1, 0.6, 0.2
	// divided by 1); lexical C=1, A=0.6, D=0.2. A = 0.8, C = 0.6, B = 0.3.
	mx := fuse([]storage.Candidate{{ID: "A", Score: 1}, {ID: "B", Score: 0.6}, {ID: "C", Score: 0.2}}, lexical, Fusion{Method: MaxNorm, DenseWeight: 0.5})
	if got := ids(mx); got != "A,C,B,D" || !near(mx[0].Score, 0.8) || !near(mx[1].Score, 0.6) || !near(mx[2].Score, 0.3) {
		t.Errorf("max-normalised 0.5: %s %+v", got, mx)
	}
	// Spread-normalised: scores 0, 3, 6 have mean 3 and σ √6; 6 maps to
	// (6 − 3 + 3√6)/(6√6), 0 to (0 − 3 + 3√6)/(6√6); weight 1 keeps dense only.
	sp := fuse([]storage.Candidate{{ID: "A", Score: 6}, {ID: "B", Score: 3}, {ID: "C", Score: 0}}, storage.Matches{}, Fusion{Method: DBSF, DenseWeight: 1})
	sd := math.Sqrt(6)
	if ids(sp) != "A,B,C" || !near(sp[0].Score, (3+3*sd)/(6*sd)) || !near(sp[1].Score, 0.5) || !near(sp[2].Score, (3*sd-3)/(6*sd)) {
		t.Errorf("spread-normalised: %+v", sp)
	}
	// Margin 0.5, gain 1: the dense margin 0.9 − 0.5 = 0.4 raises the dense
	// weight to 0.9; A = 0.9·1 + 0.1·0.5 = 0.95, B = 0.45, C = 0.1, D = 0.
	mg := fuse(dense, lexical, Fusion{Method: Margin, DenseWeight: 0.5, MarginGain: 1})
	if got := ids(mg); got != "A,B,C,D" || !near(mg[0].Score, 0.95) || !near(mg[1].Score, 0.45) {
		t.Errorf("margin: %s %+v", got, mg)
	}
	// Evidence 0.5: the best lexical match (10) reaches a quarter of the
	// query's ideal score (40), so the lexical side counts a quarter as much
	// as under Weighted: A = 0.5 + 0.5·0.25·0.5 = 0.5625, B = 0.25,
	// C = 0.5·0.25 = 0.125, D = 0; with an ideal of 10 or less it is Weighted.
	weak := lexical
	weak.Ideal = 40
	ev := fuse(dense, weak, Fusion{Method: Evidence, DenseWeight: 0.5})
	if got := ids(ev); got != "A,B,C,D" || !near(ev[0].Score, 0.5625) || !near(ev[2].Score, 0.125) {
		t.Errorf("evidence, weak lexical side: %s %+v", got, ev)
	}
	strong := lexical
	strong.Ideal = 8
	if ev, w := fuse(dense, strong, Fusion{Method: Evidence, DenseWeight: 0.5}), fuse(dense, lexical, Fusion{Method: Weighted, DenseWeight: 0.5}); ids(ev) != ids(w) || !near(ev[1].Score, w[1].Score) {
		t.Errorf("evidence, full lexical match: %+v, want %+v", ev, w)
	}
	// Ties break by id; a list of equal scores normalises to 1.
	tie := fuse([]storage.Candidate{{ID: "Y", Score: 1}, {ID: "X", Score: 1}}, storage.Matches{}, Fusion{Method: Weighted, DenseWeight: 0.5})
	if ids(tie) != "X,Y" || !near(tie[0].Score, 0.5) {
		t.Errorf("ties: %+v", tie)
	}
}

// BenchmarkFuse fuses two candidate lists of CandidateDepth, as every
// hybrid query does.
func BenchmarkFuse(b *testing.B) {
	var dense, lexical []storage.Candidate
	for i := range CandidateDepth {
		dense = append(dense, storage.Candidate{ID: "d" + strconv.Itoa(i), Score: 1 - float32(i)/100})
		lexical = append(lexical, storage.Candidate{ID: "d" + strconv.Itoa(i*3%150), Score: 20 - float32(i)/10})
	}
	for _, f := range []Fusion{{Method: RRF}, DefaultFusion} {
		b.Run(string(f.Method), func(b *testing.B) {
			for b.Loop() {
				fuse(dense, storage.Matches{Candidates: lexical}, f)
			}
		})
	}
}
