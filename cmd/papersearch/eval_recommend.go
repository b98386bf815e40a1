package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/eval"
)

// evalRecommendations measures each recommendation method on the
// corpus's authors (eval.RecommendCases) and prints, for the half of
// the authors asked for, each method's recall@20 and nDCG@20 and their
// paired differences from the default method's.
func evalRecommendations(ctx context.Context, ix evalIndex, a evalArgs, papers []papersearch.Paper, stdout, stderr io.Writer) error {
	cases := eval.RecommendCases(papers, 8, 2)
	fmt.Fprintf(stderr, "eval: %d recommendation cases (authors of at least 8 papers, their latest 2 held out)\n", len(cases))
	methods := search.RecommendMethods()
	runs := make(map[search.RecommendMethod][]eval.RecommendOutcome, len(methods))
	for _, m := range methods {
		start := time.Now()
		var err error
		if runs[m], err = eval.EvaluateRecommendations(ctx, ix.eng, cases, m); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "eval: %s in %s (%.1f ms a case)\n", m, time.Since(start).Round(time.Millisecond),
			float64(time.Since(start).Microseconds())/1000/float64(max(1, len(cases))))
	}
	keep := func(o eval.RecommendOutcome) bool { return eval.HeldOut(o.Author) == a.heldOut }
	base := runs[methods[0]]
	sums := make(map[search.RecommendMethod]eval.RecommendSummary, len(methods))
	for _, m := range methods {
		sums[m] = eval.SummarizeRecommendations(runs[m], base, keep)
	}
	if a.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"corpus": a.corpus, "documents": len(papers), "model": ix.model, "split": a.split(),
			"cases": len(cases), "summaries": sums, "outcomes": runs})
	}
	fmt.Fprintf(stdout, "%s split of %d cases; Δ is the paired difference from %s, ± its standard error\n", a.split(), len(cases), methods[0])
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "METHOD\tCASES\tRECALL@20\tΔ\tnDCG@20\tΔ")
	for _, m := range methods {
		s := sums[m]
		fmt.Fprintf(tw, "%s\t%d\t%.4f ± %.4f\t%+.4f ± %.4f\t%.4f ± %.4f\t%+.4f ± %.4f\n", m, s.Cases, s.Recall20.Mean, s.Recall20.SE,
			s.DeltaRecall20.Mean, s.DeltaRecall20.SE, s.NDCG20.Mean, s.NDCG20.SE, s.DeltaNDCG20.Mean, s.DeltaNDCG20.SE)
	}
	return tw.Flush()
}
