package eval

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/lexical"
)

// EvalQuery is one benchmark query.
type EvalQuery struct {
	ID   string `json:"_id"`
	Text string `json:"text"`
}

// Qrels are relevance judgements: query id → document id → grade (> 0 is
// relevant).
type Qrels map[string]map[string]int

// ReadQueries reads BEIR queries: JSONL with "_id" and "text".
func ReadQueries(r io.Reader) ([]EvalQuery, error) {
	var out []EvalQuery
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var q EvalQuery
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil || q.ID == "" {
			return nil, fmt.Errorf("queries line %d: want a JSON object with _id and text", line)
		}
		out = append(out, q)
	}
	return out, sc.Err()
}

// ReadQrels reads BEIR judgements: a TSV with a header line and the
// columns query-id, corpus-id, score.
func ReadQrels(r io.Reader) (Qrels, error) {
	q := Qrels{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Split(strings.TrimSpace(sc.Text()), "\t")
		if line == 1 && len(f) == 3 && f[2] == "score" || len(f) == 1 && f[0] == "" {
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("qrels line %d: want 3 tab-separated columns", line)
		}
		grade, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("qrels line %d: score %q is not an integer", line, f[2])
		}
		if q[f[0]] == nil {
			q[f[0]] = map[string]int{}
		}
		q[f[0]][f[1]] = grade
	}
	return q, sc.Err()
}

// Metrics are a run's means over the judged queries.
type Metrics struct {
	Mode      string  `json:"mode"`
	Fusion    string  `json:"fusion,omitempty"`
	NDCG10    float64 `json:"ndcg@10"`
	Recall100 float64 `json:"recall@100"`
	MRR10     float64 `json:"mrr@10"`
	// First and Top10 are the shares of queries with a relevant document
	// ranked first and within the first 10 (success@1, success@10).
	First   float64 `json:"first"`
	Top10   float64 `json:"top10"`
	Queries int     `json:"queries"`
}

// Outcome is one query's result in a run.
type Outcome struct {
	ID string `json:"id"`
	// Overlap is the query's Overlap with its relevant documents.
	Overlap   float64 `json:"overlap"`
	NDCG10    float64 `json:"ndcg@10"`
	Recall100 float64 `json:"recall@100"`
	// RR is the reciprocal rank of the first relevant document within the
	// first 10, or 0.
	RR float64 `json:"rr@10"`
}

// Run is every judged query's outcome under one configuration, in the
// order of the queries.
type Run struct {
	Mode     string    `json:"mode"`
	Fusion   string    `json:"fusion,omitempty"`
	Outcomes []Outcome `json:"outcomes"`
}

// Evaluate runs every judged query in mode and records each one's nDCG@10,
// recall@100, reciprocal rank and its overlap with texts (document id →
// the text it was indexed from; see Overlap). Queries without judgements
// are skipped, as trec_eval does.
func Evaluate(ctx context.Context, e *search.Engine, queries []EvalQuery, qrels Qrels, texts map[string]string, mode search.Mode) (Run, error) {
	run := Run{Mode: string(mode)}
	if mode != search.Dense && mode != search.Lexical {
		run.Fusion = e.Fusion().String()
	}
	for _, q := range queries {
		rels, ok := qrels[q.ID]
		if !ok {
			continue
		}
		res, err := e.Search(ctx, search.Query{Text: q.Text, Mode: mode, Limit: search.MaxLimit})
		if errors.Is(err, search.ErrInvalidQuery) {
			res = search.Results{} // e.g. a query of stop words only in lexical mode: nothing found
		} else if err != nil {
			return run, fmt.Errorf("query %s: %w", q.ID, err)
		}
		ranked := make([]string, len(res.Hits))
		for i, h := range res.Hits {
			ranked[i] = h.ID
		}
		run.Outcomes = append(run.Outcomes, Judge(q, ranked, rels, texts))
	}
	return run, nil
}

// Judge is the outcome of ranking for query q.
func Judge(q EvalQuery, ranked []string, rels map[string]int, texts map[string]string) Outcome {
	var judged []string
	for id, g := range rels {
		if g > 0 {
			judged = append(judged, texts[id])
		}
	}
	return Outcome{ID: q.ID, Overlap: Overlap(q.Text, judged...), NDCG10: NDCG(ranked, rels, 10),
		Recall100: Recall(ranked, rels, 100), RR: MRR(ranked, rels, 10)}
}

// Overlap is the share of query's content words found in the best of
// texts: its distinct index terms (lexical.Analyze) that are not function
// words, against the terms of each text. A query of function words only
// has overlap 1.
func Overlap(query string, texts ...string) float64 {
	words := map[string]bool{}
	for _, t := range lexical.Tokens(query) {
		if !lexical.IsFunctionWord(t.Word) {
			words[t.Term] = true
		}
	}
	if len(words) == 0 {
		return 1
	}
	var best float64
	for _, text := range texts {
		terms := map[string]bool{}
		for _, t := range lexical.Analyze(text) {
			terms[t] = true
		}
		found := 0
		for w := range words {
			if terms[w] {
				found++
			}
		}
		best = max(best, float64(found)/float64(len(words)))
	}
	return best
}

// Overlap bands: every figure is reported for the queries whose overlap
// is below 40% (the words differ), from 40% to 60%, and above 60%.
const (
	BandAll  = "all"
	BandLow  = "<40%"
	BandMid  = "40-60%"
	BandHigh = ">60%"
)

// Bands are the overlap bands, BandAll first.
func Bands() []string { return []string{BandAll, BandLow, BandMid, BandHigh} }

// InBand reports whether an overlap o falls in band.
func InBand(o float64, band string) bool {
	switch band {
	case BandLow:
		return o < 0.4
	case BandMid:
		return o >= 0.4 && o <= 0.6
	case BandHigh:
		return o > 0.6
	}
	return true
}

// HeldOut reports whether the query with this id belongs to the held-out
// half of its signal, on which no choice is made: a fixed split by
// SHA-256 of the id that any tool can reproduce.
func HeldOut(id string) bool {
	sum := sha256.Sum256([]byte("papersearch held out\x00" + id))
	return sum[0]&1 == 1
}

// Summary is a run's means over some of its queries, with the paired
// differences from a baseline run over the same queries.
type Summary struct {
	Metrics
	// Delta and DeltaSE are the candidate's mean paired difference from
	// the baseline, and its standard error, per metric; zero without a
	// baseline.
	Delta   Metrics `json:"delta"`
	DeltaSE Metrics `json:"delta_se"`
}

// Summarize returns run's means over the outcomes keep accepts, and
// their paired differences from base (nil: none), which must be a run
// of the same queries.
func Summarize(run Run, base *Run, keep func(Outcome) bool) Summary {
	s := Summary{Metrics: Metrics{Mode: run.Mode, Fusion: run.Fusion}}
	var baseOf map[string]Outcome
	if base != nil {
		baseOf = make(map[string]Outcome, len(base.Outcomes))
		for _, o := range base.Outcomes {
			baseOf[o.ID] = o
		}
	}
	metrics := func(o Outcome) [5]float64 {
		return [5]float64{o.NDCG10, o.Recall100, o.RR, b2f(o.RR == 1), b2f(o.RR > 0)}
	}
	var sum, dsum, dsq [5]float64
	var n, paired int
	for _, o := range run.Outcomes {
		if !keep(o) {
			continue
		}
		n++
		m := metrics(o)
		for i := range m {
			sum[i] += m[i]
		}
		b, ok := baseOf[o.ID]
		if !ok {
			continue
		}
		paired++
		bm := metrics(b)
		for i := range m {
			d := m[i] - bm[i]
			dsum[i] += d
			dsq[i] += d * d
		}
	}
	set := func(m *Metrics, v [5]float64) {
		m.NDCG10, m.Recall100, m.MRR10, m.First, m.Top10 = v[0], v[1], v[2], v[3], v[4]
	}
	s.Queries = n
	if n > 0 {
		var mean [5]float64
		for i := range sum {
			mean[i] = sum[i] / float64(n)
		}
		set(&s.Metrics, mean)
	}
	if paired > 1 {
		var mean, se [5]float64
		for i := range dsum {
			mean[i] = dsum[i] / float64(paired)
			variance := (dsq[i] - float64(paired)*mean[i]*mean[i]) / float64(paired-1)
			se[i] = math.Sqrt(max(variance, 0) / float64(paired))
		}
		set(&s.Delta, mean)
		set(&s.DeltaSE, se)
		s.Delta.Queries, s.DeltaSE.Queries = paired, paired
	}
	return s
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Sample returns the n papers whose ids come after the first from by
// SHA-256, a fixed sample any tool can reproduce, plus every paper the
// judgements name, in their order in papers.
func Sample(papers []papersearch.Paper, from, n int, qrels Qrels) []papersearch.Paper {
	judged := map[string]bool{}
	for _, rels := range qrels {
		for id := range rels {
			judged[id] = true
		}
	}
	keys := make([]string, len(papers))
	for i, p := range papers {
		sum := sha256.Sum256([]byte(p.ID))
		keys[i] = hex.EncodeToString(sum[:])
	}
	order := make([]int, len(papers))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return keys[order[a]] < keys[order[b]] })
	keep := make([]bool, len(papers))
	for _, i := range order[min(from, len(order)):min(from+n, len(order))] {
		keep[i] = true
	}
	var out []papersearch.Paper
	for i, p := range papers {
		if keep[i] || judged[p.ID] {
			out = append(out, p)
		}
	}
	return out
}

// TitleQueries makes every paper's title a query whose one relevant
// document is the paper, and removes the titles from papers, so each
// title is matched against the abstract alone.
func TitleQueries(papers []papersearch.Paper) ([]EvalQuery, Qrels) {
	var queries []EvalQuery
	qrels := Qrels{}
	for i, p := range papers {
		if p.Title == "" {
			continue
		}
		id := "title:" + p.ID
		queries = append(queries, EvalQuery{ID: id, Text: p.Title})
		qrels[id] = map[string]int{p.ID: 1}
		papers[i].Title = ""
	}
	return queries, qrels
}

// Features writes, for every judged query, one JSON line with the
// second stage's features of its first FeatureDepth fused candidates in
// hybrid mode, the query's overlap and split, and its relevant
// documents: what a second stage is trained and measured on.
func Features(ctx context.Context, e *search.Engine, queries []EvalQuery, qrels Qrels, texts map[string]string, w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, q := range queries {
		rels, ok := qrels[q.ID]
		if !ok {
			continue
		}
		feats, err := candidateFeatures(ctx, e, q.Text)
		if err != nil && !errors.Is(err, search.ErrInvalidQuery) {
			return fmt.Errorf("query %s: %w", q.ID, err)
		}
		o := Judge(q, nil, rels, texts)
		x := make([][]float64, len(feats))
		for i, f := range feats {
			x[i] = f.Vector()
		}
		if err := enc.Encode(map[string]any{"id": q.ID, "held_out": HeldOut(q.ID), "overlap": o.Overlap,
			"relevant": rels, "candidates": feats, "names": FeatureNames(max(len(e.Models())-1, 1)), "x": x, "model": e.Model().Name}); err != nil {
			return err
		}
	}
	return nil
}
