package search

import (
	"cmp"
	"math"
	"slices"
)

// BM25 parameters: the setting that reproduces Pyserini's published SciFact
// result (k1 = 0.9, b = 0.4).
const (
	BM25K1 = 0.9
	BM25B  = 0.4
)

// idf is BM25's inverse document frequency as Lucene computes it, for a
// term in df of n documents: ln(1 + (n - df + 0.5) / (df + 0.5)).
func idf(n, df int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// tfWeight is the BM25 weight of a term occurring tf times in a document of
// length dl, where documents average avgdl terms; multiplied by idf it is
// the term's contribution to the score.
func tfWeight(tf, dl int, avgdl float64) float64 {
	if avgdl <= 0 {
		avgdl = 1
	}
	t := float64(tf)
	return t * (BM25K1 + 1) / (t + BM25K1*(1-BM25B+BM25B*float64(dl)/avgdl))
}

// termCounts returns how often each term occurs.
func termCounts(terms []string) map[string]int {
	m := make(map[string]int, len(terms))
	for _, t := range terms {
		m[t]++
	}
	return m
}

// posting is one document's occurrences of a term.
type posting struct {
	row int32
	tf  int32
}

// lexicalIndex is an in-memory inverted index over document rows.
type lexicalIndex struct {
	termIDs  map[string]int32
	postings [][]posting // by term id
	df       []int32     // live documents holding each term, by term id
	rowTerms [][]int32   // by row: the distinct terms of that row, to update df on removal
	docLen   []int32     // by row; -1 marks a removed row
	live     int
	totalLen int64
	// norms holds k1·(1 - b + b·dl/avgdl) by row for the current avgdl;
	// add and remove clear it, commit fills it again.
	norms []float32
}

// newLexicalIndex returns an empty index with room for n rows.
func newLexicalIndex(n int) *lexicalIndex {
	return &lexicalIndex{termIDs: map[string]int32{}, rowTerms: make([][]int32, 0, n), docLen: make([]int32, 0, n)}
}

// add indexes row (which must be the next row) with its terms.
func (x *lexicalIndex) add(row int, terms []string) {
	for len(x.docLen) <= row {
		x.docLen = append(x.docLen, -1)
		x.rowTerms = append(x.rowTerms, nil)
	}
	counts := termCounts(terms)
	ids := make([]int32, 0, len(counts))
	for term, tf := range counts {
		id, ok := x.termIDs[term]
		if !ok {
			id = int32(len(x.postings))
			x.termIDs[term] = id
			x.postings = append(x.postings, nil)
			x.df = append(x.df, 0)
		}
		x.postings[id] = append(x.postings[id], posting{row: int32(row), tf: int32(tf)})
		x.df[id]++
		ids = append(ids, id)
	}
	x.rowTerms[row] = ids
	x.docLen[row] = int32(len(terms))
	x.live++
	x.totalLen += int64(len(terms))
	x.norms = nil
}

// remove marks row as gone; its postings are skipped until the index is rebuilt.
func (x *lexicalIndex) remove(row int) {
	if row < len(x.docLen) && x.docLen[row] >= 0 {
		x.live--
		x.totalLen -= int64(x.docLen[row])
		x.docLen[row] = -1
		for _, id := range x.rowTerms[row] {
			x.df[id]--
		}
		x.rowTerms[row] = nil
		x.norms = nil
	}
}

// MaxQueryTerms bounds the distinct terms a lexical query is scored with: a
// longer query (a paper's own text, in similar-paper search) keeps the
// MaxQueryTerms with the largest query-tf·idf, as Lucene's MoreLikeThis
// does (25 is its default); the rest add little but time.
const MaxQueryTerms = 25

// weightedTerm is a query term with its weight, query tf × idf.
type weightedTerm struct {
	term   string
	qtf    int
	weight float64
}

// weighTerms is how both stores read a lexical query over n documents, df
// giving each term's document frequency: the terms some document holds,
// weighted query tf × idf and pruned to the MaxQueryTerms heaviest, and the
// query's ideal score. The ideal is what a document of average length
// holding each of those terms once would score (for such a document BM25's
// tf part is 1, so each term adds its weight), plus the weight of every
// query term no document holds. Fusion weighs the lexical side by how much
// of its ideal the best match reaches: a question whose only matches are
// common words ("more", "likely") has weak lexical evidence however the
// matches rank among themselves.
func weighTerms(query []string, n int, df func(term string) int) (scored []weightedTerm, ideal float64) {
	for term, qtf := range termCounts(query) {
		d := df(term)
		w := idf(n, d) * float64(qtf)
		if d == 0 {
			ideal += w
			continue
		}
		scored = append(scored, weightedTerm{term, qtf, w})
	}
	if len(scored) > MaxQueryTerms {
		slices.SortFunc(scored, func(a, b weightedTerm) int {
			if c := cmp.Compare(b.weight, a.weight); c != 0 {
				return c
			}
			return cmp.Compare(a.term, b.term)
		})
		scored = scored[:MaxQueryTerms]
	}
	for _, t := range scored {
		ideal += t.weight
	}
	return scored, ideal
}

type queryTerm struct {
	id     int32
	weight float64 // query tf × idf
}

// queryTerms returns the query's known terms with their weights, pruned to
// MaxQueryTerms, and the query's ideal score (see weighTerms).
func (x *lexicalIndex) queryTerms(query []string) ([]queryTerm, float64) {
	scored, ideal := weighTerms(query, x.live, func(term string) int {
		if id, ok := x.termIDs[term]; ok {
			return int(x.df[id])
		}
		return 0
	})
	out := make([]queryTerm, len(scored))
	for i, t := range scored {
		out[i] = queryTerm{x.termIDs[t.term], t.weight}
	}
	return out, ideal
}

// commit recomputes what depends on the whole index, BM25's length
// normalisation k1·(1 - b + b·dl/avgdl) by row, after a change. The owner
// calls it under the same write lock as the change, so readers never write.
func (x *lexicalIndex) commit() { x.norms = x.computeNorms() }

// computeNorms returns BM25's length normalisation by row for the index as
// it is now.
func (x *lexicalIndex) computeNorms() []float32 {
	avgdl := float64(x.totalLen) / float64(max(x.live, 1))
	n := make([]float32, len(x.docLen))
	for r, dl := range x.docLen {
		n[r] = float32(BM25K1 * (1 - BM25B + BM25B*float64(dl)/avgdl))
	}
	return n
}

// score adds each live, allowed row's BM25 score for the query terms to
// scores (indexed by row) and returns the rows it touched and the query's
// ideal score (see weighTerms). A term repeated in the query counts as
// often as it is repeated, as in Lucene.
func (x *lexicalIndex) score(query []string, allow func(row int) bool, scores []float32, touched []int32) ([]int32, float64) {
	if x.live == 0 {
		return touched, 0
	}
	norms := x.norms
	if norms == nil { // changed and not yet committed: compute, keep nothing
		norms = x.computeNorms()
	}
	terms, ideal := x.queryTerms(query)
	for _, qt := range terms {
		w := float32(qt.weight * (BM25K1 + 1))
		for _, p := range x.postings[qt.id] {
			if x.docLen[p.row] < 0 || (allow != nil && !allow(int(p.row))) {
				continue
			}
			if scores[p.row] == 0 {
				touched = append(touched, p.row)
			}
			tf := float32(p.tf)
			scores[p.row] += w * tf / (tf + norms[p.row])
		}
	}
	return touched, ideal
}
