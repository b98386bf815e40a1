package search_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/sqlite"
	"github.com/papersearch/papersearch/search/storage"
)

// The aspect dev signal (docs/ranking.md), fixed before it was first run:
// two papers share a method when their titles name the same method term,
// a problem when their titles name the same task term, and comparable
// results when their abstracts name the same benchmark data set.
var aspectSignals = []struct {
	aspect search.Aspect
	field  string // "title" or "abstract"
	terms  []string
}{
	{search.MethodAspect, "title", []string{"transformer", "diffusion", "contrastive", "graph neural", "reinforcement learning",
		"variational", "adversarial", "bayesian", "distillation", "prompt", "federated", "meta-learning", "kernel",
		"gaussian process", "normalizing flow", "low-rank", "attention", "mixture of experts", "sparse", "quantization"}},
	{search.BackgroundAspect, "title", []string{"question answering", "machine translation", "summarization", "image classification",
		"object detection", "segmentation", "speech", "recommendation", "named entity", "sentiment", "molecul", "protein",
		"code generation", "dialogue", "retrieval", "time series", "3d", "video", "parsing", "relation extraction"}},
	{search.ResultAspect, "abstract", []string{"imagenet", "cifar", "glue", "squad", "coco", "wmt", "mnist", "superglue",
		"librispeech", "ms marco", "wikitext", "penn treebank", "atari", "mujoco", "cityscapes", "kitti", "conll", "ogb"}},
}

// BenchmarkAspectSignal compares, on ML papers embedded with the
// default model, whole-paper similarity (hybrid and dense) with aspect
// similarity under several rules by precision@10 on the aspect signal
// above: for each term, up to 30 query papers holding it; relevant, the
// other papers holding it. Queries a paper has no sentence of the aspect
// for are left out for every method; each line gives the paired
// difference from whole-paper hybrid similarity and its standard error.
// The rules were compared on the first 3,000 papers, with sentence vectors
// pooled from each paper's encoder pass (contextual, the default) and
// embedded on their own (separate); "held-out" checks the chosen rule on
// the next 6,000, which no choice was made on.
//
//	go test -run '^$' -bench AspectSignal -benchtime 1x -timeout 60m ./search/
func BenchmarkAspectSignal(b *testing.B) {
	all := testenv.MLPapers(b, 9000)
	local, err := embed.NewLocal(embed.LocalOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, run := range []struct {
		name     string
		papers   []papersearch.Paper
		separate bool
	}{
		{"contextual", all[:3000], false},
		{"separate", all[:3000], true},
		{"held-out", all[3000:], false},
	} {
		name, papers, separate := run.name, run.papers, run.separate
		b.Run(name, func(b *testing.B) {
			// PAPERSEARCH_SIGNAL_DB=/tmp/signal keeps the embedded papers
			// for the next run, in /tmp/signal-<name>.db.
			path := os.Getenv("PAPERSEARCH_SIGNAL_DB")
			if path == "" {
				path = filepath.Join(b.TempDir(), "p")
			}
			aspectSignal(b, papers, local, path+"-"+name+".db", separate)
		})
	}
}

func aspectSignal(b *testing.B, papers []papersearch.Paper, local embed.Embedder, path string, separate bool) {
	store, err := sqlite.Open(context.Background(), path, local.Info())
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	engine := func(r search.ResearchOptions) *search.Engine {
		r.SeparateSentences = separate
		e, err := search.NewEngine(store, local, search.WithResearch(search.Options{}, r))
		if err != nil {
			b.Fatal(err)
		}
		return e
	}
	if _, err := catalog.New(engine(search.ResearchOptions{}), catalog.Options{}).Ingest(ctx, papers, nil); err != nil {
		b.Fatal(err)
	}
	type method struct {
		name string
		opts search.ResearchOptions
		mode search.Mode
		// whole compares whole papers, ignoring the aspect.
		whole bool
	}
	evenly := search.DefaultFusion
	methods := []method{
		{name: "whole, hybrid", whole: true},
		{name: "whole, dense", whole: true, mode: search.Dense},
		{name: "aspect: best pair, hybrid (default)"},
		{name: "aspect: best pair, dense", mode: search.Dense},
		{name: "aspect: mean of best matches, hybrid", opts: search.ResearchOptions{AspectMatch: search.MatchSum}},
		{name: "aspect: mean of best matches, dense", opts: search.ResearchOptions{AspectMatch: search.MatchSum}, mode: search.Dense},
		{name: "aspect: best pair, hybrid fused evenly", opts: search.ResearchOptions{AspectFusion: &evenly}},
		{name: "aspect: best pair, dense, same role", opts: search.ResearchOptions{AspectSameRole: true}, mode: search.Dense},
		{name: "aspect: mean, half whole, dense", opts: search.ResearchOptions{AspectMatch: search.MatchSum, AspectWhole: 0.5}, mode: search.Dense},
		{name: "aspect: mean, half whole, dense, 300 deep", opts: search.ResearchOptions{AspectMatch: search.MatchSum, AspectWhole: 0.5, AspectDepth: 300}, mode: search.Dense},
	}
	engines := make([]*search.Engine, len(methods))
	for i, m := range methods {
		engines[i] = engine(m.opts)
	}
	run := func(i int, id string, a search.Aspect) (search.Results, error) {
		q := search.SimilarQuery{ID: id, Limit: 10, Aspect: a, Mode: methods[i].mode}
		if methods[i].whole {
			q.Aspect = search.WholePaper
		}
		return engines[i].Similar(ctx, q)
	}
	text := func(p papersearch.Paper, field string) string {
		if field == "title" {
			return strings.ToLower(p.Title)
		}
		return strings.ToLower(p.Abstract)
	}
	for _, sig := range aspectSignals {
		precision := make([]float64, len(methods))
		var perQuery [][]float64 // [query][method]
		queries, skipped := 0, 0
		for _, term := range sig.terms {
			holds := map[string]bool{}
			var ids []string
			for _, p := range papers {
				if strings.Contains(text(p, sig.field), term) {
					holds[p.ID] = true
					ids = append(ids, p.ID)
				}
			}
			if len(ids) < 6 {
				continue
			}
			for _, id := range ids[:min(30, len(ids))] {
				var got [][]papersearch.Hit
				for i := range methods {
					res, err := run(i, id, sig.aspect)
					if errors.Is(err, storage.ErrNotFound) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					got = append(got, res.Hits)
				}
				if len(got) < len(methods) {
					skipped++
					continue
				}
				queries++
				row := make([]float64, len(got))
				for i, hits := range got {
					n := 0
					for _, h := range hits {
						if holds[h.ID] {
							n++
						}
					}
					row[i] = float64(n) / 10
					precision[i] += row[i]
				}
				perQuery = append(perQuery, row)
			}
		}
		for i, m := range methods {
			p := precision[i] / float64(max(queries, 1))
			// The paired difference from whole-paper hybrid similarity
			// and its standard error over the queries.
			var sum, sq float64
			for _, row := range perQuery {
				d := row[i] - row[0]
				sum, sq = sum+d, sq+d*d
			}
			n := float64(max(len(perQuery), 2))
			mean := sum / n
			se := math.Sqrt(max(0, sq/n-mean*mean) / (n - 1))
			fmt.Fprintf(os.Stderr, "%-10s %-40s P@10 %.4f  vs whole %+.4f ± %.4f (%d queries, %d without a %s sentence)\n",
				sig.aspect, m.name, p, mean, se, queries, skipped, sig.aspect)
			b.ReportMetric(p, fmt.Sprintf("P@10-%s-%d", sig.aspect, i))
		}
	}
}
