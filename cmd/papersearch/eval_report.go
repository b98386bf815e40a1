package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/eval"
)

// What eval prints: its table of runs, the overlap bands of the queries and
// the misses.

// evalRow is one run's summary over one overlap band.
type evalRow struct {
	Band string `json:"band"`
	eval.Summary
}

// evalRows summarises each run per overlap band over the half of the
// queries asked for, against base.
func evalRows(runs []eval.Run, base eval.Run, heldOut bool) []evalRow {
	inSplit := func(o eval.Outcome) bool { return eval.HeldOut(o.ID) == heldOut }
	var rows []evalRow
	for _, r := range runs {
		for _, band := range eval.Bands() {
			s := eval.Summarize(r, &base, func(o eval.Outcome) bool { return inSplit(o) && eval.InBand(o.Overlap, band) })
			if s.Queries > 0 {
				rows = append(rows, evalRow{band, s})
			}
		}
	}
	return rows
}

// printEvalRows prints rows as a table.
func printEvalRows(w io.Writer, a evalArgs, base eval.Run, rows []evalRow) error {
	against := "hybrid " + base.Fusion
	if a.baselineFile != "" {
		against = a.baselineFile + "'s hybrid " + base.Fusion
	}
	fmt.Fprintf(w, "%s split; Δ is the paired difference from %s, ± its standard error\n", a.split(), against)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODE\tFUSION\tOVERLAP\tQUERIES\tnDCG@10\tΔ\tFIRST\tΔ\tTOP 10\tΔ\tMRR@10\tRECALL@100")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.4f\t%+.4f ± %.4f\t%.1f%%\t%+.1f ± %.1f\t%.1f%%\t%+.1f ± %.1f\t%.4f\t%.4f\n",
			r.Mode, r.Fusion, r.Band, r.Queries, r.NDCG10, r.Delta.NDCG10, r.DeltaSE.NDCG10,
			100*r.First, 100*r.Delta.First, 100*r.DeltaSE.First, 100*r.Top10, 100*r.Delta.Top10, 100*r.DeltaSE.Top10,
			r.MRR10, r.Recall100)
	}
	return tw.Flush()
}

// readBaseline reads the hybrid run of an eval's JSON output.
func readBaseline(name string) (eval.Run, error) {
	var out struct {
		Hybrid eval.Run `json:"hybrid"`
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return eval.Run{}, err
	}
	if err := json.Unmarshal(b, &out); err != nil || len(out.Hybrid.Outcomes) == 0 {
		return eval.Run{}, fmt.Errorf("%s: not the --json output of papersearch eval (no hybrid run): %v", name, err)
	}
	return out.Hybrid, nil
}

// printOverlap lists each judged query's overlap with its relevant
// documents and band, and the share of queries per band.
func printOverlap(queries []eval.EvalQuery, qrels eval.Qrels, texts map[string]string, w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUERY\tOVERLAP\tBAND\tSPLIT\tTEXT")
	count := map[string]int{}
	for _, q := range queries {
		rels, ok := qrels[q.ID]
		if !ok {
			continue
		}
		o := eval.Judge(q, nil, rels, texts).Overlap
		band := ""
		for _, b := range eval.Bands()[1:] {
			if eval.InBand(o, b) {
				band = b
			}
		}
		count[band]++
		count[eval.BandAll]++
		split := "dev"
		if eval.HeldOut(q.ID) {
			split = "held-out"
		}
		fmt.Fprintf(tw, "%s\t%.0f%%\t%s\t%s\t%s\n", q.ID, 100*o, band, split, q.Text)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, b := range eval.Bands() {
		fmt.Fprintf(w, "%s: %d queries\n", b, count[b])
	}
	return nil
}

// printMisses lists the queries whose best relevant document is not first
// in hybrid mode, with its rank in each mode (0: not in the first 100).
func printMisses(ctx context.Context, eng *search.Engine, queries []eval.EvalQuery, qrels eval.Qrels, heldOut bool, w io.Writer) error {
	rank := func(q eval.EvalQuery, m search.Mode) (int, error) {
		res, err := eng.Search(ctx, search.Query{Text: q.Text, Mode: m, Limit: search.MaxLimit})
		if err != nil && !errors.Is(err, search.ErrInvalidQuery) {
			return 0, err
		}
		for _, h := range res.Hits {
			if qrels[q.ID][h.ID] > 0 {
				return h.Rank, nil
			}
		}
		return 0, nil
	}
	fmt.Fprintln(w, "misses: query\thybrid\tdense\tlexical\ttext")
	for _, q := range queries {
		if _, ok := qrels[q.ID]; !ok || eval.HeldOut(q.ID) != heldOut {
			continue
		}
		var r [3]int
		for i, m := range []search.Mode{search.Hybrid, search.Dense, search.Lexical} {
			n, err := rank(q, m)
			if err != nil {
				return fmt.Errorf("query %s: %w", q.ID, err)
			}
			r[i] = n
		}
		if r[0] != 1 {
			fmt.Fprintf(w, "misses: %s\t%d\t%d\t%d\t%s\n", q.ID, r[0], r[1], r[2], q.Text)
		}
	}
	return nil
}
