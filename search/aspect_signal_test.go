package search_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/sqlite"
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

// BenchmarkAspectSignal compares, on the first 1,200 ML papers embedded
// with the default model, whole-paper similarity (hybrid and dense) with
// aspect similarity (mean of best matches, and best pair) by precision@10
// on the aspect signal above: for each term, up to 15 query papers
// holding it; relevant, the other papers holding it. Queries a paper has
// no sentence of the aspect for are left out for every method.
//
//	go test -run '^$' -bench AspectSignal -benchtime 1x -timeout 60m ./search/
func BenchmarkAspectSignal(b *testing.B) {
	papers := testenv.MLPapers(b, 1200)
	local, err := embed.NewLocal(embed.LocalOptions{})
	if err != nil {
		b.Fatal(err)
	}
	// PAPERSEARCH_SIGNAL_DB keeps the embedded papers for the next run.
	path := os.Getenv("PAPERSEARCH_SIGNAL_DB")
	if path == "" {
		path = filepath.Join(b.TempDir(), "p.db")
	}
	store, err := sqlite.Open(context.Background(), path, local.Info())
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	engine := func(opts search.Options) *search.Engine {
		e, err := search.NewEngine(store, local, opts)
		if err != nil {
			b.Fatal(err)
		}
		return e
	}
	alone, half := 0.0, 0.5
	mean, best, blend := engine(search.Options{AspectWhole: &alone}),
		engine(search.Options{AspectMatch: search.MatchBest, AspectWhole: &alone}), engine(search.Options{AspectWhole: &half})
	deep := engine(search.Options{AspectWhole: &half, AspectDepth: 300})
	sameRole := engine(search.Options{AspectWhole: &half, AspectSameRole: true})
	if _, err := mean.Ingest(ctx, papers, nil); err != nil {
		b.Fatal(err)
	}
	methods := []struct {
		name string
		run  func(id string, a search.Aspect) (search.Results, error)
	}{
		{"whole, hybrid", func(id string, _ search.Aspect) (search.Results, error) {
			return mean.Similar(ctx, search.SimilarQuery{ID: id, Limit: 10})
		}},
		{"whole, dense", func(id string, _ search.Aspect) (search.Results, error) {
			return mean.Similar(ctx, search.SimilarQuery{ID: id, Limit: 10, Mode: search.Dense})
		}},
		{"aspect, mean of best matches", func(id string, a search.Aspect) (search.Results, error) {
			return mean.Similar(ctx, search.SimilarQuery{ID: id, Limit: 10, Aspect: a})
		}},
		{"aspect, best pair", func(id string, a search.Aspect) (search.Results, error) {
			return best.Similar(ctx, search.SimilarQuery{ID: id, Limit: 10, Aspect: a})
		}},
		{"aspect, mean, half whole", func(id string, a search.Aspect) (search.Results, error) {
			return blend.Similar(ctx, search.SimilarQuery{ID: id, Limit: 10, Aspect: a})
		}},
		{"aspect, mean, half whole, 300 deep", func(id string, a search.Aspect) (search.Results, error) {
			return deep.Similar(ctx, search.SimilarQuery{ID: id, Limit: 10, Aspect: a})
		}},
		{"aspect, mean, half whole, same role", func(id string, a search.Aspect) (search.Results, error) {
			return sameRole.Similar(ctx, search.SimilarQuery{ID: id, Limit: 10, Aspect: a})
		}},
	}
	text := func(p papersearch.Paper, field string) string {
		if field == "title" {
			return strings.ToLower(p.Title)
		}
		return strings.ToLower(p.Abstract)
	}
	for _, sig := range aspectSignals {
		precision := make([]float64, len(methods))
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
			for _, id := range ids[:min(15, len(ids))] {
				var got [][]papersearch.Hit
				for _, m := range methods {
					res, err := m.run(id, sig.aspect)
					if errors.Is(err, search.ErrNotFound) {
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
				for i, hits := range got {
					n := 0
					for _, h := range hits {
						if holds[h.ID] {
							n++
						}
					}
					precision[i] += float64(n) / 10
				}
			}
		}
		for i, m := range methods {
			p := precision[i] / float64(max(queries, 1))
			b.Logf("%-10s %-30s P@10 %.4f (%d queries, %d without a %s sentence)", sig.aspect, m.name, p, queries, skipped, sig.aspect)
			b.ReportMetric(p, fmt.Sprintf("P@10-%s-%d", sig.aspect, i))
		}
	}
}
