package atlas

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/papersearch/papersearch/embed"
)

// planted is k clusters of per points each: unit vectors in dim
// dimensions around k random centres, spread noise apart; label[i] is
// point i's cluster.
func planted(k, per, dim int, noise float64, seed uint64) (vecs [][]float32, label []int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	for c := range k {
		centre := make([]float64, dim)
		for d := range centre {
			centre[d] = rng.NormFloat64()
		}
		for range per {
			v := make([]float32, dim)
			for d := range v {
				v[d] = float32(centre[d] + noise*rng.NormFloat64())
			}
			embed.Normalize(v)
			vecs, label = append(vecs, v), append(label, c)
		}
	}
	return vecs, label
}

// TestNeighboursAreExact: every point's k neighbours are those a plain
// sort of all its similarities gives, most similar first.
func TestNeighboursAreExact(t *testing.T) {
	vecs, _ := planted(5, 40, 24, 0.8, 1)
	got, err := Neighbours(context.Background(), vecs, 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		var all []Neighbour
		for j, w := range vecs {
			if j != i {
				all = append(all, Neighbour{Index: j, Score: embed.Dot(v, w)})
			}
		}
		slices.SortFunc(all, func(a, b Neighbour) int {
			if a.Score != b.Score {
				return cmp.Compare(b.Score, a.Score)
			}
			return a.Index - b.Index
		})
		if !slices.Equal(got[i], all[:7]) {
			t.Fatalf("point %d: %v, want %v", i, got[i], all[:7])
		}
	}
}

// TestLayoutKeepsNeighbourhoods: planted clusters laid out keep their
// points' neighbours (trustworthiness and continuity at 10 over 0.9, far
// above the principal components alone), each cluster stays together,
// and the same seed gives the same layout.
func TestLayoutKeepsNeighbourhoods(t *testing.T) {
	ctx := context.Background()
	vecs, label := planted(12, 60, 48, 0.9, 2)
	graph, err := Neighbours(ctx, vecs, 15, nil)
	if err != nil {
		t.Fatal(err)
	}
	y, err := Layout(ctx, vecs, graph, LayoutOptions{Seed: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range y {
		if p[0] < 0 || p[0] > 1 || p[1] < 0 || p[1] > 1 || math.IsNaN(float64(p[0])) {
			t.Fatalf("a point outside the unit square: %v", p)
		}
	}
	q, err := Preserved(ctx, vecs, y, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	pca, _ := Layout(ctx, vecs, graph, LayoutOptions{Seed: 3, PCAOnly: true}, nil)
	base, _ := Preserved(ctx, vecs, pca, 10, nil)
	t.Logf("layout %+v; principal components %+v", q, base)
	if q.Trustworthiness.Mean < 0.9 || q.Continuity.Mean < 0.9 || q.Trustworthiness.Mean <= base.Trustworthiness.Mean {
		t.Errorf("layout %+v, principal components alone %+v", q, base)
	}
	// A point's ten nearest in the layout are nearly all of its cluster.
	same := 0
	for i := range y {
		low := make([]float32, len(y))
		for j := range y {
			dx, dy := y[i][0]-y[j][0], y[i][1]-y[j][1]
			low[j] = -(dx*dx + dy*dy)
		}
		low[i] = float32(math.Inf(-1))
		for _, j := range nearestOf(low, 10) {
			if label[j] == label[i] {
				same++
			}
		}
	}
	if share := float64(same) / float64(10*len(y)); share < 0.95 {
		t.Errorf("%.3f of layout neighbours share a cluster", share)
	}
	again, _ := Layout(ctx, vecs, graph, LayoutOptions{Seed: 3}, nil)
	if !slices.Equal(again, y) {
		t.Error("the same seed gave another layout")
	}
	if _, err := Layout(ctx, vecs[:1], graph[:1], LayoutOptions{}, nil); err == nil {
		t.Error("a layout of one point")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Layout(cancelled, vecs, graph, LayoutOptions{}, nil); err == nil {
		t.Error("a cancelled layout finished")
	}
}

// TestClusterOfFewDistinctVectors: papers whose vectors are all alike
// (copies, or an embedder that tells them apart poorly) leave k-means'
// clusters empty; the coarser levels are still made, nested, without a
// panic (a server building its map crashed on one).
func TestClusterOfFewDistinctVectors(t *testing.T) {
	vecs, _ := planted(3, 1, 32, 0, 9)
	for len(vecs) < 40 {
		vecs = append(vecs, vecs[len(vecs)%3])
	}
	h, err := Cluster(context.Background(), vecs, LevelSizes(len(vecs)), 1)
	if err != nil {
		t.Fatal(err)
	}
	for l := 1; l < len(h.Of); l++ {
		for i := range vecs {
			if h.Parent[l][h.Of[l][i]] != h.Of[l-1][i] {
				t.Fatalf("point %d: level %d does not nest in the one above", i, l)
			}
		}
	}
}

// TestClusterFindsPlantedClusters: the finest level finds the planted
// clusters (AMI near 1), each level nests in the one above, and the
// sizes are those asked for.
func TestClusterFindsPlantedClusters(t *testing.T) {
	vecs, label := planted(8, 50, 32, 0.6, 4)
	h, err := Cluster(context.Background(), vecs, []int{2, 4, 8}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if ami := AMI(h.Of[2], label); ami < 0.95 {
		t.Errorf("AMI of the finest level with the planted clusters: %.3f", ami)
	}
	for l, want := range []int{2, 4, 8} {
		if got := slices.Max(h.Of[l]) + 1; got != want {
			t.Errorf("level %d has %d clusters, want %d", l, got, want)
		}
		if l == 0 {
			continue
		}
		for i := range vecs {
			if h.Parent[l][h.Of[l][i]] != h.Of[l-1][i] {
				t.Fatalf("point %d: cluster %d of level %d lies in %d above, its parent says %d", i, h.Of[l][i], l, h.Of[l-1][i], h.Parent[l][h.Of[l][i]])
			}
		}
	}
	if got := LevelSizes(29100); !slices.Equal(got, []int{10, 42, 171}) {
		t.Errorf("LevelSizes(29100) = %v", got)
	}
	if got := LevelSizes(3); !slices.Equal(got, []int{2}) {
		t.Errorf("LevelSizes(3) = %v", got)
	}
}

// TestLabelNamesWhatIsDistinctive: each planted topic is named by its own
// words, not by the words every paper uses nor by PDF extraction's glyph
// references.
func TestLabelNamesWhatIsDistinctive(t *testing.T) {
	topics := [][]string{{"protein", "folding"}, {"robot", "grasping"}, {"language", "translation"}}
	var texts []string
	var of []int
	for c, words := range topics {
		for i := range 30 {
			text := fmt.Sprintf("We propose a new method for %s %s; results show our model improves %d benchmarks.", words[0], words[1], i)
			if c == 0 { // PDF extraction's debris, in one topic's papers only
				text += " The (cid:4)(cid:12) (cid:7) signal."
			}
			texts = append(texts, text)
			of = append(of, c)
		}
	}
	got := Label(texts, Hierarchy{Of: [][]int{of}}, 3)
	for c, words := range topics {
		if len(got[0][c].Terms) == 0 || got[0][c].Terms[0] != words[0]+" "+words[1] {
			t.Errorf("topic %d named %v, want %q first", c, got[0][c].Terms, words[0]+" "+words[1])
		}
		for _, term := range got[0][c].Terms {
			if strings.Contains(term, "propose") || strings.Contains(term, "model") || strings.Contains(term, "cid") {
				t.Errorf("topic %d named by a word every paper uses: %v", c, got[0][c].Terms)
			}
		}
	}
}

// TestLabelPassesOverWordsManyTopicsShare: a word that four of six
// topics use far more than the other two (distinctive of each of the four)
// names none of them.
func TestLabelPassesOverWordsManyTopicsShare(t *testing.T) {
	topics := []string{"protein folding", "robot grasping", "machine translation", "graph coloring", "image denoising", "speech recognition"}
	var texts []string
	var of []int
	for c, topic := range topics {
		for i := range 30 {
			text := fmt.Sprintf("Results on %s: %d benchmarks.", topic, i)
			if c < 4 {
				text += " An algorithm. A faster algorithm."
			}
			texts = append(texts, text)
			of = append(of, c)
		}
	}
	got := Label(texts, Hierarchy{Of: [][]int{of}}, 2)
	for c := range topics {
		if len(got[0][c].Terms) == 0 || got[0][c].Terms[0] != topics[c] {
			t.Errorf("topic %d named %v, want %q first", c, got[0][c].Terms, topics[c])
		}
		if slices.ContainsFunc(got[0][c].Terms, func(term string) bool { return strings.Contains(term, "algorithm") }) {
			t.Errorf("topic %d named %v: by a word four of six topics share", c, got[0][c].Terms)
		}
	}
}

// TestAMI: agreement is 1 whatever the labels' names, about 0 for
// independent labellings, and matches scikit-learn's
// adjusted_mutual_info_score (1.9.1) on two small cases.
func TestAMI(t *testing.T) {
	a := []int{0, 0, 1, 1, 2, 2, 2}
	if got := AMI(a, []string{"x", "x", "y", "y", "z", "z", "z"}); math.Abs(got-1) > 1e-12 {
		t.Errorf("renamed labels: %v", got)
	}
	for _, tc := range []struct {
		a, b []int
		want float64
	}{
		{[]int{0, 0, 0, 1, 1, 1, 2, 2}, []int{0, 0, 1, 1, 2, 2, 2, 2}, 0.2745416497368333},
		{[]int{0, 0, 1, 1, 2, 2, 3, 3, 3, 0}, []int{1, 1, 0, 0, 0, 2, 2, 2, 1, 1}, 0.40577818863462317},
	} {
		if got := AMI(tc.a, tc.b); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("AMI(%v, %v) = %v, scikit-learn says %v", tc.a, tc.b, got, tc.want)
		}
	}
	rng := rand.New(rand.NewPCG(9, 9))
	x, y := make([]int, 5000), make([]int, 5000)
	for i := range x {
		x[i], y[i] = rng.IntN(10), rng.IntN(7)
	}
	if got := AMI(x, y); math.Abs(got) > 0.01 {
		t.Errorf("independent labellings: %v", got)
	}
}

// TestPreservedIsOneForAFaithfulLayout: a layout that is the vectors
// themselves keeps every neighbourhood.
func TestPreservedIsOneForAFaithfulLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var vecs [][]float32
	var y [][2]float32
	for range 300 {
		a := rng.Float64() * math.Pi // half a circle: cosine order is distance order
		vecs = append(vecs, []float32{float32(math.Cos(a)), float32(math.Sin(a))})
		y = append(y, [2]float32{float32(math.Cos(a)), float32(math.Sin(a))})
	}
	q, err := Preserved(context.Background(), vecs, y, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if q.Trustworthiness.Mean < 0.9999 || q.Continuity.Mean < 0.9999 {
		t.Errorf("a faithful layout: %+v", q)
	}
}

// TestNNDescentFindsMostNeighbours: the approximate neighbours of large
// corpora are nearly all the exact ones (recall over 0.95 on planted
// clusters), and the same every time.
func TestNNDescentFindsMostNeighbours(t *testing.T) {
	ctx := context.Background()
	vecs, _ := planted(30, 100, 32, 1.2, 6)
	exact, err := Neighbours(ctx, vecs, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	approx, err := nnDescent(ctx, vecs, 10, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for i := range vecs {
		for _, nb := range approx[i] {
			if slices.Contains(exact[i], nb) {
				found++
			}
		}
	}
	recall := float64(found) / float64(10*len(vecs))
	t.Logf("NN-descent recall@10: %.4f", recall)
	if recall < 0.95 {
		t.Errorf("NN-descent recall@10 %.4f", recall)
	}
	again, _ := nnDescent(ctx, vecs, 10, 1, nil)
	for i := range approx {
		if !slices.Equal(again[i], approx[i]) {
			t.Fatal("NN-descent gave another graph the second time")
		}
	}
}

// TestPowB: the layout's fast power is within 1e-4 of math.Pow over the
// squared distances it meets.
func TestPowB(t *testing.T) {
	worst := 0.0
	for x := 1e-6; x < 1e4; x *= 1.0007 {
		got, want := float64(powB(float32(x))), math.Pow(x, curveB)
		worst = math.Max(worst, math.Abs(got-want)/want)
	}
	if worst > 1e-4 {
		t.Errorf("powB: worst relative error %.2e", worst)
	}
}

// TestLabelTwoUnevenClusters: the 2,000 papers, two broad topics
// (one of most of the papers): a cluster is named by what sets it apart
// from the other's papers, not by the words of scholarly writing it
// merely uses more ("models, propose, task"; "algorithm, problem"), and
// the two names share no word.
func TestLabelTwoUnevenClusters(t *testing.T) {
	var texts []string
	var of []int
	for i := range 170 {
		text := fmt.Sprintf("We propose models for the task %d and show results.", i)
		if i%10 < 6 {
			text += " Language and translation."
		}
		texts, of = append(texts, text), append(of, 0)
	}
	for i := range 30 {
		text := fmt.Sprintf("An algorithm for the problem %d.", i)
		if i%10 < 6 {
			text += " Kernels, and bounds."
		}
		texts, of = append(texts, text), append(of, 1)
	}
	got := Label(texts, Hierarchy{Of: [][]int{of}}, 3)
	if !strings.Contains(strings.Join(got[0][0].Terms, " "), "language") || !strings.Contains(strings.Join(got[0][1].Terms, " "), "kernel") {
		t.Errorf("named %v and %v; want language and kernel among them", got[0][0].Terms, got[0][1].Terms)
	}
	mean, most, plain := NameOverlap(got[0])
	if plain != 0 || most != 0 || mean != 0 {
		t.Errorf("names %v: overlap %.2f (max %.2f), %.0f%% words of scholarly writing; want none", got[0], mean, most, 100*plain)
	}
}

// TestNameOverlap: the Jaccard index of two names' words, phrases split
// and words stemmed, and the share of words of scholarly writing.
func TestNameOverlap(t *testing.T) {
	mean, most, plain := NameOverlap([]Topic{{Terms: []string{"language models", "tasks"}}, {Terms: []string{"model", "robots"}}, {Terms: []string{"graphs"}}})
	// {languag, model, task} and {model, robot}: 1/4; the others 0.
	if math.Abs(mean-1.0/12) > 1e-9 || most != 0.25 || math.Abs(plain-2.0/5) > 1e-9 {
		t.Errorf("mean %.4f, max %.4f, scholarly %.4f", mean, most, plain)
	}
}
