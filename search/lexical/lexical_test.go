package lexical

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-5 }

func TestAnalyze(t *testing.T) {
	got := strings.Join(Analyze("The cat's Networks are RUNNING with dogs; e.g. 3D-printed U.S. models’"), " ")
	want := "cat network run dog e g 3d print u s model"
	if got != want {
		t.Errorf("Analyze = %q, want %q", got, want)
	}
	toks := Tokens("Studies of networks")
	if len(toks) != 2 || toks[0].Word != "studies" || toks[0].Term != "studi" || toks[1].Term != "network" {
		t.Errorf("Tokens = %+v", toks)
	}
}

// BM25 against a score computed by hand with Lucene's formula.
func TestBM25(t *testing.T) {
	x := NewIndex(0)
	x.Add(0, []string{"cat", "cat", "dog"})
	x.Add(1, []string{"dog", "bird"})
	scores := make([]float32, 2)
	x.Score([]string{"cat"}, nil, scores, nil)
	// idf = ln(1 + 1.5/1.5) = ln 2; tf part = 2·1.9 / (2 + 0.9·(0.6 + 0.4·3/2.5)).
	if want := math.Ln2 * 3.8 / (2 + 0.9*(0.6+0.4*3/2.5)); !near(float64(scores[0]), want) || scores[1] != 0 {
		t.Errorf("cat: scores %v, want [%f 0]", scores, want)
	}
	clear(scores)
	x.Score([]string{"dog"}, nil, scores, nil)
	if !(scores[1] > scores[0]) || !near(float64(scores[1]), math.Log(1.2)*1.9/(1+0.9*(0.6+0.4*2/2.5))) {
		t.Errorf("dog: scores %v; the shorter document should win", scores)
	}
	// The ideal score of "cat zebra" over 2 documents: idf(cat) = ln 2 and
	// zebra, held by none, ln(1 + 2.5/0.5) = ln 6.
	if _, _, ideal := x.Score([]string{"cat", "zebra"}, nil, make([]float32, 2), nil); !near(ideal, math.Ln2+math.Log(6)) {
		t.Errorf("ideal of cat zebra = %v, want ln 2 + ln 6", ideal)
	}
	x.Remove(1)
	for _, committed := range []bool{false, true} { // norms computed for the query, then kept
		if committed {
			x.Commit()
		}
		clear(scores)
		touched, _, _ := x.Score([]string{"dog"}, nil, scores, nil)
		if scores[1] != 0 || scores[0] == 0 || len(touched) != 1 || touched[0] != 0 {
			t.Errorf("after removing row 1 (committed %v): scores %v, touched %v", committed, scores, touched)
		}
	}
}

// TestScoreRows: the rows asked for score what Score gives them, the others
// nothing, removed and unknown rows are skipped, and the ideal is Score's.
func TestScoreRows(t *testing.T) {
	x := NewIndex(0)
	docs := []string{"graph neural networks for molecules", "we propose a graph model", "sorting numbers fast",
		"graph attention for graph data", "molecules and proteins", "we sort graphs"}
	for i, d := range docs {
		x.Add(i, Analyze(d))
	}
	x.Remove(4)
	x.Commit()
	query := Analyze("we propose graph models of molecules")
	all := make([]float32, len(docs))
	_, _, wantIdeal := x.Score(query, nil, all, nil)
	got := make([]float32, len(docs))
	_, ideal := x.ScoreRows(query, []int{3, 0, 4, 2, 99, -1}, got)
	for r := range docs {
		want := float32(0)
		if r == 0 || r == 3 || r == 2 {
			want = all[r]
		}
		if !near(float64(got[r]), float64(want)) {
			t.Errorf("row %d: %v, want %v", r, got[r], want)
		}
	}
	if got[0] == 0 || got[3] == 0 || ideal != wantIdeal {
		t.Errorf("scores %v, ideal %v (want %v)", got, ideal, wantIdeal)
	}
}

// zipfIndex is an index of n documents of 40 to 160 terms drawn from a
// vocabulary of 20,000 with Zipf's law (common words in most documents,
// rare ones in a few), every tenth removed, and a query of 60 terms drawn
// the same way.
func zipfIndex(n int) (*Index, []string) {
	r := rand.New(rand.NewPCG(31, 32))
	z := rand.NewZipf(r, 1.1, 2, 19999)
	terms := func(k int) []string {
		out := make([]string, k)
		for i := range out {
			out[i] = fmt.Sprint("t", z.Uint64())
		}
		return out
	}
	x := NewIndex(n)
	for i := range n {
		x.Add(i, terms(40+r.IntN(120)))
	}
	for i := 0; i < n; i += 10 {
		x.Remove(i)
	}
	x.Commit()
	return x, terms(60)
}

// TestScoreRowsGallops: over a larger index, for rows asked for from one
// to most, in any order, removed or unknown, each row's score is
// Score's to the bit and every other row's nothing.
func TestScoreRowsGallops(t *testing.T) {
	const n = 3000
	x, query := zipfIndex(n)
	all := make([]float32, n)
	x.Score(query, nil, all, nil)
	r := rand.New(rand.NewPCG(33, 34))
	for _, k := range []int{1, 7, 64, 500, 2900} {
		rows := r.Perm(n)[:k]
		rows = append(rows, -3, n+5)
		got := make([]float32, n)
		x.ScoreRows(query, rows, got)
		asked := map[int]bool{}
		for _, row := range rows {
			asked[row] = true
		}
		for row := range n {
			want := float32(0)
			if asked[row] {
				want = all[row]
			}
			if math.Float32bits(got[row]) != math.Float32bits(want) {
				t.Fatalf("%d rows asked: row %d scored %v, want %v", k, row, got[row], want)
			}
		}
	}
}

// TestScoreSIMD: Score's rows touched, in their order, and scores are
// those of its loop one posting at a time, to the bit, for terms of every
// number of postings (those of the kernel's 16-posting steps and the rest)
// over live and removed rows, scores already nonzero included.
func TestScoreSIMD(t *testing.T) {
	const n = 3000
	x, query := zipfIndex(n)
	got, want := make([]float32, n), make([]float32, n)
	for i := 0; i < n; i += 7 { // rows another query scored first
		got[i], want[i] = float32(i), float32(i)
	}
	gotTouched, _, _ := x.Score(query, nil, got, nil)
	terms, _, norms, _ := x.prepare(query)
	var wantTouched []int32
	for _, qt := range terms {
		wantTouched = scorePostings(x.postings[qt.id], norms, want, float32(qt.weight*(K1+1)), nil, wantTouched)
	}
	if !slices.Equal(gotTouched, wantTouched) {
		t.Fatalf("touched %d rows, want %d (first %v, want %v)", len(gotTouched), len(wantTouched), gotTouched[:min(8, len(gotTouched))], wantTouched[:min(8, len(wantTouched))])
	}
	for r := range n {
		if math.Float32bits(got[r]) != math.Float32bits(want[r]) {
			t.Fatalf("row %d scored %v, want %v", r, got[r], want[r])
		}
	}
	if len(terms) < 10 {
		t.Fatalf("the query scores %d terms: too few to try the kernel", len(terms))
	}
}

// BenchmarkScore is a similar-paper search's lexical side: a paper's
// heaviest 25 terms scored over 29,000 documents.
func BenchmarkScore(b *testing.B) {
	x, query := zipfIndex(29000)
	scores := make([]float32, 29000)
	var touched []int32
	for b.Loop() {
		touched, _, _ = x.Score(query, nil, scores, touched[:0])
		for _, r := range touched {
			scores[r] = 0
		}
	}
}

// BenchmarkScoreRows is an aspect search's lexical side: 200 candidates
// of 29,000 documents scored for a query of 60 terms.
func BenchmarkScoreRows(b *testing.B) {
	x, query := zipfIndex(29000)
	rows := rand.New(rand.NewPCG(35, 36)).Perm(29000)[:200]
	scores := make([]float32, 29000)
	for b.Loop() {
		x.ScoreRows(query, rows, scores)
	}
}

// BenchmarkAnalyze analyses one abstract for BM25.
func BenchmarkAnalyze(b *testing.B) {
	text := strings.Repeat("Transformers model long documents with sparse attention patterns, improving efficiency. ", 12)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Analyze(text)
	}
}
