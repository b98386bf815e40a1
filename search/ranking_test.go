package search_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/eval"
	"github.com/papersearch/papersearch/search/storage"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-5 }

// The metrics, against examples computed by hand with trec_eval's
// definitions.
func TestMetrics(t *testing.T) {
	rels := map[string]int{"d2": 1, "d3": 1, "d9": 1}
	ranked := []string{"d1", "d2", "d3"}
	// DCG = 1/log2(3) + 1/log2(4) = 1.130930; IDCG = 1 + 1/log2(3) + 1/log2(4) = 2.130930.
	if got := eval.NDCG(ranked, rels, 10); !near(got, 0.530721) {
		t.Errorf("nDCG@10 = %.6f, want 0.530721", got)
	}
	if got := eval.Recall(ranked, rels, 100); !near(got, 2.0/3) {
		t.Errorf("recall@100 = %.6f, want 0.666667", got)
	}
	if got := eval.MRR(ranked, rels, 10); !near(got, 0.5) {
		t.Errorf("MRR@10 = %.6f, want 0.5", got)
	}
	// Cut-offs: nothing relevant in the first 1.
	if eval.NDCG(ranked, rels, 1) != 0 || eval.MRR(ranked, rels, 1) != 0 || eval.Recall(ranked, rels, 1) != 0 {
		t.Error("metrics at cut-off 1 should be 0")
	}
	// Graded: DCG = 1 + 2/log2(3) = 2.261860; IDCG = 2 + 1/log2(3) = 2.630930.
	if got := eval.NDCG([]string{"b", "a"}, map[string]int{"a": 2, "b": 1}, 10); !near(got, 0.859718) {
		t.Errorf("graded nDCG = %.6f, want 0.859718", got)
	}
	// Perfect and empty rankings.
	if got := eval.NDCG([]string{"d2", "d3", "d9"}, rels, 10); !near(got, 1) {
		t.Errorf("perfect nDCG = %f", got)
	}
	if eval.NDCG(nil, rels, 10) != 0 || eval.Recall(nil, rels, 100) != 0 || eval.MRR(nil, rels, 10) != 0 {
		t.Error("an empty ranking scores 0")
	}
}

func TestReadQueriesAndQrels(t *testing.T) {
	qs, err := eval.ReadQueries(strings.NewReader(`{"_id":"0","text":"a claim"}` + "\n\n" + `{"_id":"2","text":"another"}`))
	if err != nil || len(qs) != 2 || qs[1].ID != "2" || qs[0].Text != "a claim" {
		t.Fatalf("queries %v %v", qs, err)
	}
	qr, err := eval.ReadQrels(strings.NewReader("query-id\tcorpus-id\tscore\n0\t31715818\t1\n0\t42\t2\n2\t7\t1\n"))
	if err != nil || len(qr) != 2 || qr["0"]["42"] != 2 || qr["2"]["7"] != 1 {
		t.Fatalf("qrels %v %v", qr, err)
	}
	if _, err := eval.ReadQrels(strings.NewReader("h\th\tscore\n0\t1\n")); err == nil {
		t.Error("short qrels line accepted")
	}
}

// failingEmbedder cannot embed, as when the endpoint is down.
type failingEmbedder struct{ info embed.ModelInfo }

func (f failingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("endpoint down")
}
func (f failingEmbedder) Info() embed.ModelInfo { return f.info }

func TestDegradedToLexical(t *testing.T) {
	_, papers := sharedSeeded(t)
	broken, err := search.NewEngine(shared.store, failingEmbedder{shared.store.Model()}, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := broken.Search(ctx, search.Query{Text: "OneVeriAgent RTL debugging waveforms", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Degraded, []string{"dense"}) || len(res.Hits) == 0 || res.Hits[0].ID != seedID(t, papers, "Long-horizon RTL agents") {
		t.Errorf("degraded search: %+v", res)
	}
	if _, err := broken.Search(ctx, search.Query{Text: "anything", Mode: search.Dense}); err == nil {
		t.Error("dense mode with a failing embedder succeeded")
	}
	// Similar needs no query embedding.
	if _, err := broken.Similar(ctx, search.SimilarQuery{ID: papers[0].ID}); err != nil {
		t.Errorf("similar with a failing embedder: %v", err)
	}
}

func TestModesLikeAndExplain(t *testing.T) {
	eng, papers := sharedSeeded(t)
	ctx := context.Background()
	rtl := seedID(t, papers, "Long-horizon RTL agents")
	for _, m := range []search.Mode{search.Hybrid, search.Dense, search.Lexical} {
		res, err := eng.Search(ctx, search.Query{Text: "RTL agents debugging hardware with waveform viewers", Mode: m, Limit: 3})
		if err != nil || len(res.Hits) == 0 || res.Hits[0].ID != rtl {
			t.Errorf("mode %s: %v %+v", m, err, res.Hits)
		}
	}
	// Like alone: papers like the contact paper, never the paper itself.
	contact := seedID(t, papers, "Accurate contact modeling")
	res, err := eng.Search(ctx, search.Query{Like: []string{contact}, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{seedID(t, papers, "We introduce $\\textbf{UniCon3R}$"): true, seedID(t, papers, "Humanoid whole-body loco-manipulation requires"): true}
	for _, h := range res.Hits[:2] {
		if !want[h.ID] {
			t.Errorf("like contact paper: top 2 %v", res.Hits[:2])
		}
	}
	for _, h := range res.Hits {
		if h.ID == contact {
			t.Error("a liked paper came back")
		}
	}
	// Unlike pushes the interaction papers down for a humanoid question.
	q := search.Query{Text: "humanoid robots learning whole-body skills", Limit: 5, Mode: search.Dense}
	base, _ := eng.Search(ctx, q)
	q.Unlike = []string{seedID(t, papers, "Humanoid whole-body loco-manipulation requires")}
	moved, _ := eng.Search(ctx, q)
	if base.Hits[0].Score == moved.Hits[0].Score {
		t.Error("unlike changed nothing")
	}
	// A paper named both ways is liked only.
	liked, _ := eng.Search(ctx, search.Query{Text: q.Text, Limit: 5, Mode: search.Dense, Like: []string{contact}})
	both, _ := eng.Search(ctx, search.Query{Text: q.Text, Limit: 5, Mode: search.Dense, Like: []string{contact}, Unlike: []string{contact}})
	if len(liked.Hits) == 0 || fmt.Sprint(hitScores(liked.Hits)) != fmt.Sprint(hitScores(both.Hits)) {
		t.Errorf("liked and unliked %v, liked %v: want the same", hitScores(both.Hits), hitScores(liked.Hits))
	}
	var fe *papersearch.FieldError
	if _, err := eng.Search(ctx, search.Query{Like: []string{"no-such-id"}}); !errors.Is(err, storage.ErrNotFound) || !errors.As(err, &fe) || fe.Field != "like/0" {
		t.Errorf("unknown like id: %v, want storage.ErrNotFound on like/0", err)
	}

	res, err = eng.Search(ctx, search.Query{Text: "networks that recover hand contact with objects", Limit: 2, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	ex := res.Hits[0].Explanation
	if ex == nil || res.Hits[0].ID != contact || ex.DenseRank == 0 || ex.LexicalRank == 0 || ex.DenseScore == nil ||
		!slices.Contains(ex.MatchedTerms, "contact") || !slices.Contains(ex.MatchedTerms, "hand") ||
		ex.BestSentence == "" || !strings.Contains(res.Hits[0].Paper.Abstract, ex.BestSentence) {
		t.Errorf("explanation %+v", ex)
	}
}

func TestFiltersAndCursor(t *testing.T) {
	ctx := context.Background()
	eng, _, _ := seededEngine(t, filepath.Join(t.TempDir(), "p.db"))
	papers := []papersearch.Paper{
		{ID: "a", Title: "Graph networks for molecules", Abstract: "Message passing predicts molecular properties.", Authors: []string{"Geoffrey Hinton"}, Venue: "ICML", Year: 2019},
		{ID: "b", Title: "Graph attention", Abstract: "Attention over graph neighbourhoods.", Authors: []string{"Yann LeCun"}, Venue: "NeurIPS", Year: 2021},
		{ID: "c", Title: "Graphs of proteins", Abstract: "Protein structure as a residue graph.", Authors: []string{"Ada Lovelace", "Geoff Smith"}, Venue: "ICLR", Year: 2023},
		{ID: "d", Title: "Speech", Abstract: "Speech recognition with transformers.", Authors: []string{"Alan Turing"}, Venue: "ICML", Year: 2023},
	}
	if _, err := catalog.New(eng, catalog.Options{}).Ingest(ctx, papers, nil); err != nil {
		t.Fatal(err)
	}
	ids := func(f papersearch.Filter, mode search.Mode) string {
		res, err := eng.Search(ctx, search.Query{Text: "graph", Filter: f, Mode: mode, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, h := range res.Hits {
			s = append(s, h.ID)
		}
		slices.Sort(s)
		return strings.Join(s, ",")
	}
	for _, m := range []search.Mode{search.Lexical, search.Dense} {
		for _, tt := range []struct {
			f    papersearch.Filter
			want string
		}{
			{papersearch.Filter{YearMin: 2021}, map[search.Mode]string{search.Lexical: "b,c", search.Dense: "b,c,d"}[m]},
			{papersearch.Filter{YearMax: 2020}, "a"},
			{papersearch.Filter{Venues: []string{"icml", "ICLR"}}, map[search.Mode]string{search.Lexical: "a,c", search.Dense: "a,c,d"}[m]},
			{papersearch.Filter{Author: "geoff"}, "a,c"},
			{papersearch.Filter{Author: "Geoffrey Hin"}, "a"},
			{papersearch.Filter{Author: "smith geoff", YearMin: 2020}, "c"},
			{papersearch.Filter{YearMin: 2030}, ""},
		} {
			if got := ids(tt.f, m); got != tt.want {
				t.Errorf("%s %+v: %q, want %q", m, tt.f, got, tt.want)
			}
		}
	}
	// A year range that ends before it starts is empty: it matches nothing.
	if res, err := eng.Search(ctx, search.Query{Text: "graph", Filter: papersearch.Filter{YearMin: 2022, YearMax: 2020}}); err != nil || len(res.Hits) != 0 {
		t.Errorf("year_min after year_max: %d hits, %v; want none", len(res.Hits), err)
	}

	// Pages of 1 through the 4 papers; a paper added between pages neither
	// repeats nor hides any.
	var seen []string
	q := search.Query{Text: "graph", Mode: search.Dense, Limit: 1}
	for page := 0; ; page++ {
		res, err := eng.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			if slices.Contains(seen, h.ID) {
				t.Fatalf("page %d repeats %s", page, h.ID)
			}
			if h.Rank != len(seen)+1 {
				t.Errorf("rank %d on page %d, want %d", h.Rank, page, len(seen)+1)
			}
			seen = append(seen, h.ID)
		}
		if page == 1 {
			if _, err := catalog.New(eng, catalog.Options{}).Ingest(ctx, []papersearch.Paper{{ID: "e", Title: "Graph graph graph", Abstract: "Graphs."}}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if res.NextCursor == "" {
			break
		}
		q.Cursor = res.NextCursor
	}
	slices.Sort(seen)
	if strings.Join(seen, ",") != "a,b,c,d,e" {
		t.Errorf("pages returned %v, want every paper once", seen)
	}
	// A cursor belongs to its query.
	// A cursor belongs to its query: any other names no page.
	if _, err := eng.Search(ctx, search.Query{Text: "speech", Cursor: q.Cursor}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("cursor of another query: %v", err)
	}
	if _, err := eng.Search(ctx, search.Query{Text: "graph", Cursor: "garbage!"}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("garbage cursor: %v", err)
	}
}

// TestCursorsCannotBeForged: a cursor is signed, so one whose seen list
// was changed (60,000 made-up papers, to page past the documented 1,000) or
// that another key signed names no page; engines sharing a key accept
// each other's cursors.
func TestCursorsCannotBeForged(t *testing.T) {
	ctx := context.Background()
	eng, _ := sharedSeeded(t)
	q := search.Query{Text: "learning from demonstrations", Limit: 2}
	res, err := eng.Search(ctx, q)
	if err != nil || res.NextCursor == "" {
		t.Fatal(res, err)
	}
	body, sig, _ := strings.Cut(res.NextCursor, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(body)
	forged := append(raw, make([]byte, 5*60000)...) // 60,000 made-up papers seen
	for name, cursor := range map[string]string{
		"changed seen list, old signature": base64.RawURLEncoding.EncodeToString(forged) + "." + sig,
		"no signature":                     body,
		"unsigned state":                   base64.RawURLEncoding.EncodeToString(forged),
	} {
		q.Cursor = cursor
		var fe *papersearch.FieldError
		if _, err := eng.Search(ctx, q); !errors.Is(err, storage.ErrNotFound) || !errors.As(err, &fe) || fe.Field != "cursor" {
			t.Errorf("%s: %v, want a cursor that names no page", name, err)
		}
	}
	_, _, store, _, err := newSeededEngine(filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	key := []byte("a key two engines share, 32 bytes or more")
	a, _ := search.NewEngine(store, model, search.Options{CursorKey: key})
	b, _ := search.NewEngine(store, model, search.Options{CursorKey: key})
	other, _ := search.NewEngine(store, model, search.Options{})
	if _, err := catalog.New(a, catalog.Options{}).Ingest(ctx, []papersearch.Paper{{ID: "x1", Abstract: "Graphs of graphs."}, {ID: "x2", Abstract: "Graph neural networks."}}, nil); err != nil {
		t.Fatal(err)
	}
	q = search.Query{Text: "graphs", Limit: 1, Mode: search.Lexical}
	res, err = a.Search(ctx, q)
	if err != nil || res.NextCursor == "" {
		t.Fatal(res, err)
	}
	q.Cursor = res.NextCursor
	if _, err := b.Search(ctx, q); err != nil {
		t.Errorf("an engine with the same key: %v", err)
	}
	if _, err := other.Search(ctx, q); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("an engine with another key: %v", err)
	}
}

// TestScoreMeaning pins what score means in each mode, as the README and
// the OpenAPI document say: dense, the cosine (the mean of the models'
// that compared the question); lexical, BM25; hybrid, the
// fused score in [0, 1]; and hybrid's explanation keeps each paper's
// cosine, the same number dense mode gives, for thresholds across queries.
func TestScoreMeaning(t *testing.T) {
	eng, _ := sharedSeeded(t)
	ctx := context.Background()
	const question = "robots that learn manipulation from human videos"
	// The vector the engine searches with: the model in the query role.
	qvs, err := embed.Instructed(model, embed.Query).Embed(ctx, []string{question})
	if err != nil {
		t.Fatal(err)
	}
	qv := qvs[0]
	dense, err := eng.Search(ctx, search.Query{Text: question, Mode: search.Dense, Limit: 19})
	if err != nil {
		t.Fatal(err)
	}
	cosine := map[string]float64{}
	for _, h := range dense.Hits {
		doc, _ := shared.store.Get(ctx, h.ID)
		// A question whose words the papers hold is compared by the
		// first two models (search.ModelGate).
		if want := meanCosine(t, qv, doc.Vector, search.DefaultModelGate.Core); math.Abs(h.Score-want) > 1e-4 {
			t.Errorf("dense score of %s is %f, the two models' mean cosine %f", h.ID, h.Score, want)
		}
		cosine[h.ID] = h.Score
	}
	hybrid, err := eng.Search(ctx, search.Query{Text: question, Limit: 10, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hybrid.Hits {
		if h.Score < 0 || h.Score > 1 {
			t.Errorf("hybrid score %f outside [0, 1]", h.Score)
		}
		if e := h.Explanation; e == nil || e.DenseScore == nil || math.Abs(float64(*e.DenseScore)-cosine[h.ID]) > 1e-4 {
			t.Errorf("%s: the explanation's dense score is not the cosine %f: %+v", h.ID, cosine[h.ID], h.Explanation)
		}
	}
	lexical, err := eng.Search(ctx, search.Query{Text: question, Mode: search.Lexical, Limit: 3, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range lexical.Hits {
		if e := h.Explanation; h.Score <= 0 || e == nil || e.LexicalScore == nil || math.Abs(float64(*e.LexicalScore)-h.Score) > 1e-4 {
			t.Errorf("lexical score %f is not the BM25 score %+v", h.Score, h.Explanation)
		}
	}
}

// TestSample: a fixed sample by SHA-256 of the ids, in corpus order, with
// every judged paper added.
func TestSample(t *testing.T) {
	var papers []papersearch.Paper
	for i := range 50 {
		papers = append(papers, papersearch.Paper{ID: fmt.Sprintf("p%02d", i), Abstract: "x"})
	}
	qrels := eval.Qrels{"q": {"p49": 1}}
	a, b := eval.Sample(papers, 0, 10, qrels), eval.Sample(slices.Clone(papers), 0, 10, qrels)
	if len(a) < 10 || len(a) > 11 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("sample of 10 (+1 judged): %d papers, or not reproducible", len(a))
	}
	if !slices.ContainsFunc(a, func(p papersearch.Paper) bool { return p.ID == "p49" }) {
		t.Error("the judged paper is not in the sample")
	}
	if !slices.IsSortedFunc(a, func(x, y papersearch.Paper) int { return strings.Compare(x.ID, y.ID) }) {
		t.Error("the sample is not in corpus order")
	}
	if got := eval.Sample(papers, 0, 100, nil); len(got) != 50 {
		t.Errorf("a sample larger than the corpus has %d papers", len(got))
	}
}

// hitScores is each hit's id and score, for comparing rankings.
func hitScores(hits []papersearch.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = fmt.Sprintf("%s %.6f", h.ID, h.Score)
	}
	return out
}
