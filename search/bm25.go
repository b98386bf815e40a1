package search

import "math"

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
}

func newLexicalIndex() *lexicalIndex { return &lexicalIndex{termIDs: map[string]int32{}} }

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
	}
}

// score adds each live, allowed row's BM25 score for the query terms to
// scores (indexed by row) and returns the rows it touched. A term repeated
// in the query counts as often as it is repeated, as in Lucene.
func (x *lexicalIndex) score(query []string, allow func(row int) bool, scores []float32, touched []int32) []int32 {
	if x.live == 0 {
		return touched
	}
	avgdl := float64(x.totalLen) / float64(x.live)
	for term, qtf := range termCounts(query) {
		id, ok := x.termIDs[term]
		if !ok {
			continue
		}
		w := idf(x.live, int(x.df[id])) * float64(qtf)
		for _, p := range x.postings[id] {
			dl := x.docLen[p.row]
			if dl < 0 || (allow != nil && !allow(int(p.row))) {
				continue
			}
			if scores[p.row] == 0 {
				touched = append(touched, p.row)
			}
			scores[p.row] += float32(w * tfWeight(int(p.tf), int(dl), avgdl))
		}
	}
	return touched
}
