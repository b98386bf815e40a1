package search

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

// NDCG returns nDCG@k of a ranking as trec_eval's ndcg_cut computes it:
// gain is the grade, discounted by log2(rank + 1), over the ideal ordering
// of the judged grades.
func NDCG(ranked []string, rels map[string]int, k int) float64 {
	var dcg float64
	for i, id := range ranked[:min(k, len(ranked))] {
		if g := rels[id]; g > 0 {
			dcg += float64(g) / math.Log2(float64(i+2))
		}
	}
	var grades []int
	for _, g := range rels {
		if g > 0 {
			grades = append(grades, g)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(grades)))
	var ideal float64
	for i, g := range grades[:min(k, len(grades))] {
		ideal += float64(g) / math.Log2(float64(i+2))
	}
	if ideal == 0 {
		return 0
	}
	return dcg / ideal
}

// Recall returns the share of relevant documents in the first k.
func Recall(ranked []string, rels map[string]int, k int) float64 {
	relevant, found := 0, 0
	for _, g := range rels {
		if g > 0 {
			relevant++
		}
	}
	for _, id := range ranked[:min(k, len(ranked))] {
		if rels[id] > 0 {
			found++
		}
	}
	if relevant == 0 {
		return 0
	}
	return float64(found) / float64(relevant)
}

// MRR returns the reciprocal rank of the first relevant document within the
// first k, or 0.
func MRR(ranked []string, rels map[string]int, k int) float64 {
	for i, id := range ranked[:min(k, len(ranked))] {
		if rels[id] > 0 {
			return 1 / float64(i+1)
		}
	}
	return 0
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

// Evaluate runs every judged query in mode and averages nDCG@10,
// recall@100 and MRR@10. Queries without judgements are skipped, as
// trec_eval does.
func (e *Engine) Evaluate(ctx context.Context, queries []EvalQuery, qrels Qrels, mode Mode) (Metrics, error) {
	m := Metrics{Mode: string(mode)}
	if mode != Dense && mode != Lexical {
		m.Fusion = e.opts.Fusion.String()
	}
	for _, q := range queries {
		rels, ok := qrels[q.ID]
		if !ok {
			continue
		}
		res, err := e.Search(ctx, Query{Text: q.Text, Mode: mode, Limit: MaxLimit})
		if errors.Is(err, ErrInvalidQuery) {
			res = Results{} // e.g. a query of stop words only in lexical mode: nothing found
		} else if err != nil {
			return m, fmt.Errorf("query %s: %w", q.ID, err)
		}
		ranked := make([]string, len(res.Hits))
		for i, h := range res.Hits {
			ranked[i] = h.ID
		}
		m.Record(ranked, rels)
	}
	m.Mean()
	return m, nil
}

// Record adds one query's ranking to the sums of every metric.
func (m *Metrics) Record(ranked []string, rels map[string]int) {
	rr := MRR(ranked, rels, 10)
	m.NDCG10 += NDCG(ranked, rels, 10)
	m.Recall100 += Recall(ranked, rels, 100)
	m.MRR10 += rr
	if rr == 1 {
		m.First++
	}
	if rr > 0 {
		m.Top10++
	}
	m.Queries++
}

// Mean turns the sums Record made into means over the recorded queries.
func (m *Metrics) Mean() {
	if m.Queries > 0 {
		n := float64(m.Queries)
		m.NDCG10, m.Recall100, m.MRR10 = m.NDCG10/n, m.Recall100/n, m.MRR10/n
		m.First, m.Top10 = m.First/n, m.Top10/n
	}
}

// WithFusion returns an engine over the same store and embedder that fuses
// with f.
func (e *Engine) WithFusion(f Fusion) *Engine {
	c := *e
	c.opts.Fusion = &f
	return &c
}

// Sample returns the n papers whose ids come first by SHA-256, a fixed
// sample any tool can reproduce, plus every paper the judgements name, in
// their order in papers.
func Sample(papers []papersearch.Paper, n int, qrels Qrels) []papersearch.Paper {
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
	for _, i := range order[:min(n, len(order))] {
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
