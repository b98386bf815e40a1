package lexical

import (
	"cmp"
	"fmt"
	"slices"
)

// posting is one document's occurrences of a term.
type posting struct {
	row int32
	tf  int32
}

// Index is an in-memory inverted index over document rows.
type Index struct {
	termIDs  map[string]int32
	postings [][]posting // by term id
	df       []int32     // live documents holding each term, by term id
	rowTerms [][]int32   // by row: the distinct terms of that row, to update df on removal
	docLen   []int32     // by row; -1 marks a removed row
	live     int
	totalLen int64
	// norms holds k1·(1 - b + b·dl/avgdl) by row for the current avgdl,
	// and -1 for a removed row (so that scoring reads one array a posting,
	// not docLen too); add and remove clear it, commit fills it again.
	norms []float32
}

// NewIndex returns an empty index with room for n rows.
func NewIndex(n int) *Index {
	return &Index{termIDs: map[string]int32{}, rowTerms: make([][]int32, 0, n), docLen: make([]int32, 0, n)}
}

// add indexes row (which must be past every row added before) with its
// terms: each term's postings are then of distinct rows, in order, which
// Score's SIMD loop relies on. A row added again panics.
func (x *Index) Add(row int, terms []string) {
	if row < len(x.docLen) {
		panic(fmt.Sprintf("lexical: row %d added after row %d", row, len(x.docLen)-1))
	}
	for len(x.docLen) <= row {
		x.docLen = append(x.docLen, -1)
		x.rowTerms = append(x.rowTerms, nil)
	}
	counts := TermCounts(terms)
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
func (x *Index) Remove(row int) {
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

type queryTerm struct {
	id     int32
	weight float64 // query tf × idf
}

// queryTerms returns the query's known terms with their weights, pruned to
// MaxQueryTerms, by id and as WeighTerms gives them, and the query's ideal
// score (see WeighTerms).
func (x *Index) queryTerms(query []string) ([]queryTerm, []WeightedTerm, float64) {
	scored, ideal := WeighTerms(query, x.live, func(term string) int {
		if id, ok := x.termIDs[term]; ok {
			return int(x.df[id])
		}
		return 0
	})
	out := make([]queryTerm, len(scored))
	for i, t := range scored {
		out[i] = queryTerm{x.termIDs[t.Term], t.Weight}
	}
	return out, scored, ideal
}

// commit recomputes what depends on the whole index, BM25's length
// normalisation k1·(1 - b + b·dl/avgdl) by row, after a change. The owner
// calls it under the same write lock as the change, so readers never write.
func (x *Index) Commit() { x.norms = x.computeNorms() }

// computeNorms returns BM25's length normalisation by row for the index as
// it is now, -1 for removed rows.
func (x *Index) computeNorms() []float32 {
	avgdl := float64(x.totalLen) / float64(max(x.live, 1))
	n := make([]float32, len(x.docLen))
	for r, dl := range x.docLen {
		n[r] = -1
		if dl >= 0 {
			n[r] = float32(K1 * (1 - B + B*float64(dl)/avgdl))
		}
	}
	return n
}

// Score adds each live, allowed row's BM25 score for the query terms to
// scores (indexed by row) and returns the rows it touched, the terms it
// scored with their weights, and the query's ideal score (see
// WeighTerms). A term repeated in the query counts as often as it is
// repeated, as in Lucene.
func (x *Index) Score(query []string, allow func(row int) bool, scores []float32, touched []int32) ([]int32, []WeightedTerm, float64) {
	if x.live == 0 {
		return touched, nil, 0
	}
	terms, scored, norms, ideal := x.prepare(query)
	for _, qt := range terms {
		w := float32(qt.weight * (K1 + 1))
		ps := x.postings[qt.id]
		if allow == nil { // 16 postings at a time where the CPU allows
			var done int
			touched, done = scoreSIMD(ps, norms, scores, w, touched)
			ps = ps[done:]
		}
		touched = scorePostings(ps, norms, scores, w, allow, touched)
	}
	return touched, scored, ideal
}

// scorePostings adds to scores the BM25 score of each posting of ps, of a
// term whose weight times k1+1 is w, whose row is live and allowed
// (allow nil: every row), appending to touched each row whose score was 0:
// Score's loop, one posting at a time.
func scorePostings(ps []posting, norms, scores []float32, w float32, allow func(row int) bool, touched []int32) []int32 {
	for _, p := range ps {
		norm := norms[p.row]
		if norm < 0 || (allow != nil && !allow(int(p.row))) {
			continue // removed, or not allowed
		}
		if scores[p.row] == 0 {
			touched = append(touched, p.row)
		}
		tf := float32(p.tf)
		scores[p.row] += w * tf / (tf + norm)
	}
	return touched
}

// ScoreRows adds the BM25 score of each of rows (live ones; the others
// are skipped) for the query terms to scores, as Score does for every
// row, and returns the terms it scored and the query's ideal score. Its
// cost grows with the rows asked for rather than with the postings: the
// rows, in order, are found in each term's postings (in row order too) by
// galloping from the last one found, so a term's cost is about
// rows·log(postings/rows), the least of walking its postings and of a
// binary search a row. For ranking a few candidates by a query of common
// words.
func (x *Index) ScoreRows(query []string, rows []int, scores []float32) ([]WeightedTerm, float64) {
	if x.live == 0 {
		return nil, 0
	}
	terms, scored, norms, ideal := x.prepare(query)
	sorted := make([]int32, 0, len(rows))
	for _, r := range rows {
		if r >= 0 && r < len(x.docLen) && x.docLen[r] >= 0 {
			sorted = append(sorted, int32(r))
		}
	}
	slices.Sort(sorted)
	for _, qt := range terms {
		w := float32(qt.weight * (K1 + 1))
		ps := x.postings[qt.id]
		at := 0 // no row before it is still to be found
		for _, r := range sorted {
			at = seek(ps, at, r)
			if at == len(ps) {
				break
			}
			if ps[at].row == r {
				tf := float32(ps[at].tf)
				scores[r] += w * tf / (tf + norms[r])
			}
		}
	}
	return scored, ideal
}

// seek returns the first place from at on where ps (in row order) holds
// row or a later one, len(ps) if none: it gallops (at+1, at+2, at+4, …)
// to a place past row, then searches the last step's span.
func seek(ps []posting, at int, row int32) int {
	if at >= len(ps) || ps[at].row >= row {
		return at
	}
	lo, step := at, 1 // ps[lo].row < row
	for lo+step < len(ps) && ps[lo+step].row < row {
		lo += step
		step *= 2
	}
	hi := min(lo+step, len(ps))
	i, _ := slices.BinarySearchFunc(ps[lo+1:hi], row, func(p posting, row int32) int { return cmp.Compare(p.row, row) })
	return lo + 1 + i
}

// prepare returns what scoring the query needs: its weighed terms (by id
// and as WeighTerms gives them), the rows' length normalisation, and its
// ideal score.
func (x *Index) prepare(query []string) ([]queryTerm, []WeightedTerm, []float32, float64) {
	norms := x.norms
	if norms == nil { // changed and not yet committed: compute, keep nothing
		norms = x.computeNorms()
	}
	terms, scored, ideal := x.queryTerms(query)
	return terms, scored, norms, ideal
}
