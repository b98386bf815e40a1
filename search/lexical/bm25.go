package lexical

import (
	"cmp"
	"math"
	"slices"
)

// BM25 parameters: the setting that reproduces Pyserini's published SciFact
// result (k1 = 0.9, b = 0.4).
const (
	K1 = 0.9
	B  = 0.4
)

// idf is BM25's inverse document frequency as Lucene computes it, for a
// term in df of n documents: ln(1 + (n - df + 0.5) / (df + 0.5)).
func IDF(n, df int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// TFWeight is the BM25 weight of a term occurring tf times in a document of
// length dl, where documents average avgdl terms; multiplied by idf it is
// the term's contribution to the score.
func TFWeight(tf, dl int, avgdl float64) float64 {
	if avgdl <= 0 {
		avgdl = 1
	}
	t := float64(tf)
	return t * (K1 + 1) / (t + K1*(1-B+B*float64(dl)/avgdl))
}

// TermCounts returns how often each term occurs.
func TermCounts(terms []string) map[string]int {
	m := make(map[string]int, len(terms))
	for _, t := range terms {
		m[t]++
	}
	return m
}

// MaxQueryTerms bounds the distinct terms a lexical query is scored with: a
// longer query (a paper's own text, in similar-paper search) keeps the
// MaxQueryTerms with the largest query-tf·idf, as Lucene's MoreLikeThis
// does (25 is its default); the rest add little but time.
const MaxQueryTerms = 25

// WeightedTerm is a query term with its weight, query tf × idf.
type WeightedTerm struct {
	Term   string
	QTF    int     // how often the query holds the term
	Weight float64 // QTF × IDF
}

// WeighTerms is how both stores read a lexical query over n documents, df
// giving each term's document frequency: the terms some document holds,
// weighted query tf × idf and pruned to the MaxQueryTerms heaviest, and the
// query's ideal score. The ideal is what a document of average length
// holding each of those terms once would score (for such a document BM25's
// tf part is 1, so each term adds its weight), plus the weight of every
// query term no document holds. Fusion weighs the lexical side by how much
// of its ideal the best match reaches: a question whose only matches are
// common words ("more", "likely") has weak lexical evidence however the
// matches rank among themselves.
//
// The terms come heaviest first (ties by term), and every sum is taken in
// that order: the same query scores the same, to the last bit, however
// often it is asked (pages of one query must agree).
func WeighTerms(query []string, n int, df func(term string) int) (scored []WeightedTerm, ideal float64) {
	counts := TermCounts(query)
	var absent []WeightedTerm
	for term, qtf := range counts {
		d := df(term)
		w := WeightedTerm{term, qtf, IDF(n, d) * float64(qtf)}
		if d == 0 {
			absent = append(absent, w)
		} else {
			scored = append(scored, w)
		}
	}
	heaviest := func(a, b WeightedTerm) int {
		if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
			return c
		}
		return cmp.Compare(a.Term, b.Term)
	}
	slices.SortFunc(scored, heaviest)
	slices.SortFunc(absent, heaviest)
	scored = scored[:min(len(scored), MaxQueryTerms)]
	for _, t := range slices.Concat(scored, absent) {
		ideal += t.Weight
	}
	return scored, ideal
}
