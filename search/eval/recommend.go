package eval

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search"
)

// The recommendation signal: in a corpus with authors, each author with
// enough papers is a collection of their papers but their latest, and the
// held-out papers should rank high among all the papers of their year.

// RecommendCase is one case of the signal: an author's collection, and the
// held-out papers of one year, which the collection's recommendations
// within that year should rank high.
type RecommendCase struct {
	Author   string   `json:"author"`
	Members  []string `json:"members"`
	Year     int      `json:"year"`
	Relevant []string `json:"relevant"`
}

// RecommendCases makes the signal's cases: each author (as written) of at
// least minPapers papers with a year gives a collection of all their
// papers but the latest holdOut (by year, then id), and a case for each
// year those held out fall in. Cases come sorted by author and year.
func RecommendCases(papers []papersearch.Paper, minPapers, holdOut int) []RecommendCase {
	byAuthor := map[string][]papersearch.Paper{}
	for _, p := range papers {
		if p.Year == 0 {
			continue
		}
		for _, a := range p.Authors {
			byAuthor[a] = append(byAuthor[a], p)
		}
	}
	var cases []RecommendCase
	for _, author := range slices.Sorted(maps.Keys(byAuthor)) {
		ps := byAuthor[author]
		if len(ps) < minPapers {
			continue
		}
		slices.SortFunc(ps, func(a, b papersearch.Paper) int {
			return cmp.Or(cmp.Compare(a.Year, b.Year), strings.Compare(a.ID, b.ID))
		})
		cut := len(ps) - holdOut
		var members []string
		for _, p := range ps[:cut] {
			members = append(members, p.ID)
		}
		byYear := map[int][]string{}
		for _, p := range ps[cut:] {
			byYear[p.Year] = append(byYear[p.Year], p.ID)
		}
		years := make([]int, 0, len(byYear))
		for y := range byYear {
			years = append(years, y)
		}
		slices.Sort(years)
		for _, y := range years {
			cases = append(cases, RecommendCase{Author: author, Members: members, Year: y, Relevant: byYear[y]})
		}
	}
	return cases
}

// RecommendOutcome is how one case fared: the share of its held-out papers
// in the first 20 recommendations of their year, and nDCG@20 with those as
// the relevant papers.
type RecommendOutcome struct {
	Author   string  `json:"author"`
	Year     int     `json:"year"`
	Recall20 float64 `json:"recall@20"`
	NDCG20   float64 `json:"ndcg@20"`
}

// EvaluateRecommendations runs each case with method: the collection's
// recommendations among the papers of the case's year.
func EvaluateRecommendations(ctx context.Context, e *search.Engine, cases []RecommendCase, method search.RecommendMethod) ([]RecommendOutcome, error) {
	out := make([]RecommendOutcome, 0, len(cases))
	for _, cs := range cases {
		first, err := e.RecommendAmong(ctx, cs.Members, method, papersearch.Filter{YearMin: cs.Year, YearMax: cs.Year}, 20)
		if err != nil {
			return nil, fmt.Errorf("recommendation case %s %d: %w", cs.Author, cs.Year, err)
		}
		relevant := make(map[string]bool, len(cs.Relevant))
		for _, id := range cs.Relevant {
			relevant[id] = true
		}
		var found, dcg, ideal float64
		for i, id := range first {
			if relevant[id] {
				found++
				dcg += 1 / math.Log2(float64(i+2))
			}
		}
		for i := range min(20, len(relevant)) {
			ideal += 1 / math.Log2(float64(i+2))
		}
		out = append(out, RecommendOutcome{Author: cs.Author, Year: cs.Year, Recall20: found / float64(len(relevant)), NDCG20: dcg / ideal})
	}
	return out, nil
}

// MeanSE is a mean and its standard error.
type MeanSE struct {
	Mean float64 `json:"mean"`
	SE   float64 `json:"se"`
}

// meanSE is the mean of xs and its standard error.
func meanSE(xs []float64) MeanSE {
	if len(xs) == 0 {
		return MeanSE{}
	}
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	if len(xs) < 2 {
		return MeanSE{Mean: m}
	}
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return MeanSE{Mean: m, SE: math.Sqrt(ss / float64(len(xs)-1) / float64(len(xs)))}
}

// RecommendSummary is a method's means over some cases, with their paired
// differences from a base method's over the same cases.
type RecommendSummary struct {
	Cases         int    `json:"cases"`
	Recall20      MeanSE `json:"recall@20"`
	NDCG20        MeanSE `json:"ndcg@20"`
	DeltaRecall20 MeanSE `json:"delta_recall@20"`
	DeltaNDCG20   MeanSE `json:"delta_ndcg@20"`
}

// SummarizeRecommendations summarises the outcomes keep accepts, paired
// with base (outcomes of the same cases in the same order).
func SummarizeRecommendations(outcomes, base []RecommendOutcome, keep func(RecommendOutcome) bool) RecommendSummary {
	var rec, nd, drec, dnd []float64
	for i, o := range outcomes {
		if !keep(o) {
			continue
		}
		rec, nd = append(rec, o.Recall20), append(nd, o.NDCG20)
		drec, dnd = append(drec, o.Recall20-base[i].Recall20), append(dnd, o.NDCG20-base[i].NDCG20)
	}
	return RecommendSummary{Cases: len(rec), Recall20: meanSE(rec), NDCG20: meanSE(nd), DeltaRecall20: meanSE(drec), DeltaNDCG20: meanSE(dnd)}
}
