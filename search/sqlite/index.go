package sqlite

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/storage"
)

// RescoreFactor and MinRescore size dense retrieval's second pass: the
// first pass scans every allowed paper's int8 codes and keeps the best
// max(RescoreFactor·k, MinRescore), which are then scored exactly with
// their float32 vectors. On a million random 384-d vectors this finds the
// exact top 10 with recall@10 of 1.0 (papersearch bench --synthetic).
const (
	RescoreFactor = 2
	MinRescore    = 200
	// parallelScanRows is the index size from which the first pass runs on
	// every core.
	parallelScanRows = 16384
	// compactRetired is the least number of retired rows worth a rebuild.
	compactRetired = 1024
)

// index is the in-memory side of the embedded store: every vector, the
// vectors' int8 codes for the first pass, the BM25 inverted index, and the
// fields filters test, all by row. Rows are append-only: replacing or removing a paper retires its
// row. It is safe for concurrent use; each change holds the lock for the
// whole of it, so a reader sees a change entirely or not at all.
type index struct {
	dim int

	mu      sync.RWMutex
	ids     []string        // row -> paper id; "" for a retired row
	rows    map[string]int  // paper id -> live row
	vectors matrix[float32] // row -> its vector
	// head and tail are the vectors quantised: each row's codes of
	// dimensions [0, split) in head, the rest in tail. A query zero past
	// split (the model gate's core; see Store.ScanPrefix) scans head
	// alone.
	split      int
	head, tail matrix[int8]
	scales     []float32          // row -> the scale of its codes
	scratch    []int8             // one row's codes, being quantised
	years      []int32            // row -> year
	venues     []string           // row -> storage.VenueKey of its venue
	authors    [][][]string       // row -> author -> storage.AuthorWords of the name
	tags       [][]string         // row -> the paper's tags
	tagRows    map[string][]int32 // tag -> the rows holding it, ascending, retired ones too
	days       [][2]int64         // row -> the days it was published on (storage.PaperDays)
	added      []int64            // row -> when it was added, Unix seconds
	lex        *lexical.Index
	retired    int

	scores sync.Pool // *lexScratch
	scans  sync.Pool // *scanScratch
	passes passes    // how first passes are run, and how many now
}

// newIndex returns an empty index of dim-dimensional vectors with room for
// n rows.
func newIndex(dim, split, n int) *index {
	if split <= 0 || split > dim {
		split = dim
	}
	return &index{
		dim:     dim,
		split:   split,
		head:    newMatrix[int8](split, n),
		tail:    newMatrix[int8](dim-split, n),
		scratch: make([]int8, dim),
		ids:     make([]string, 0, n),
		rows:    make(map[string]int, n),
		vectors: newMatrix[float32](dim, n),
		scales:  make([]float32, 0, n),
		years:   make([]int32, 0, n),
		venues:  make([]string, 0, n),
		authors: make([][][]string, 0, n),
		tags:    make([][]string, 0, n),
		days:    make([][2]int64, 0, n),
		added:   make([]int64, 0, n),
		tagRows: map[string][]int32{},
		lex:     lexical.NewIndex(n),
	}
}

// lexScratch is what a lexical query scores in, kept for the next: a
// BM25 score by row (all zero between queries) and the rows it touched.
type lexScratch struct {
	scores  []float32
	touched []int32
}

// entry is one paper as the index takes it.
type entry struct {
	paper  papersearch.Paper
	vector []float32 // unit length, dim long
	terms  []string  // analysed
}

// put adds the entries, each replacing the live row of its paper id, and
// reports whether retired rows are now enough to be worth a rebuild.
func (x *index) put(entries []entry) (compact bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, e := range entries {
		x.retire(e.paper.ID)
		x.append(e.paper, e.vector, e.terms)
	}
	x.lex.Commit()
	return x.compactDue()
}

// remove retires the live row of id, if any, and reports whether retired
// rows are now enough to be worth a rebuild.
func (x *index) remove(id string) (compact bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.retire(id)
	x.lex.Commit()
	return x.compactDue()
}

func (x *index) compactDue() bool {
	return x.retired >= compactRetired && x.retired >= len(x.ids)/4
}

// nextVector extends the matrix by one row and returns it, for a loader
// to decode the next row's vector in place before append. Only for an
// index nobody else sees yet.
func (x *index) nextVector() []float32 { return x.vectors.add() }

// append adds a live paper at a new row, vec appended to the matrix unless
// nextVector already placed it there. The caller holds x.mu or is the
// index's only user.
func (x *index) append(p papersearch.Paper, vec []float32, terms []string) {
	row := len(x.ids)
	x.rows[p.ID] = row
	x.ids = append(x.ids, p.ID)
	if x.vectors.rows == row {
		copy(x.vectors.add(), vec)
	}
	x.scales = append(x.scales, embed.Quantize(x.scratch, vec))
	copy(x.head.add(), x.scratch[:x.split])
	copy(x.tail.add(), x.scratch[x.split:])
	x.years = append(x.years, int32(p.Year))
	x.venues = append(x.venues, storage.VenueKey(p.Venue))
	names := make([][]string, len(p.Authors))
	for i, a := range p.Authors {
		names[i] = storage.NameWords(a)
	}
	x.authors = append(x.authors, names)
	x.tags = append(x.tags, p.Tags)
	for _, t := range p.Tags {
		x.tagRows[t] = append(x.tagRows[t], int32(row))
	}
	x.days = append(x.days, storage.PaperDays(p))
	x.added = append(x.added, p.Added.Unix())
	x.lex.Add(row, terms)
}

// vectorsOf returns the vectors of those of ids that are live: views of
// the matrix, not copies (a request reads hundreds of them). Rows are
// append-only, so a row's vector never changes once written; a rebuilt
// index is a new matrix, the old one kept while a view of it is held.
func (x *index) vectorsOf(ids []string) map[string][]float32 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make(map[string][]float32, len(ids))
	for _, id := range ids {
		if row, ok := x.rows[id]; ok {
			out[id] = x.vectors.row(row)
		}
	}
	return out
}

// addedTimes is when each of docs was first stored, as the store records
// it: the earlier of its paper's Added and its live row's, or now for a
// paper new to the store that says none.
func (x *index) addedTimes(docs []storage.Document) []time.Time {
	now := time.Now().UTC().Truncate(time.Second)
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]time.Time, len(docs))
	for i, d := range docs {
		t := d.Paper.Added
		if row, ok := x.rows[d.Paper.ID]; ok && x.added[row] != 0 {
			t = papersearch.EarlierAdded(t, time.Unix(x.added[row], 0).UTC())
		}
		if t.IsZero() {
			t = now
		}
		out[i] = t.Truncate(time.Second)
	}
	return out
}

// retire takes a paper's row out of every retrieval. The caller holds x.mu.
func (x *index) retire(id string) {
	r, ok := x.rows[id]
	if !ok {
		return
	}
	delete(x.rows, id)
	x.ids[r] = ""
	x.authors[r], x.tags[r] = nil, nil
	x.lex.Remove(r)
	x.retired++
}

// count returns the number of live papers.
func (x *index) count() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.rows)
}

// tagCounts counts the live papers holding each tag.
func (x *index) tagCounts() map[string]int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := map[string]int{}
	for _, row := range x.rows {
		for _, t := range x.tags[row] {
			out[t]++
		}
	}
	return out
}

// allow returns the filter's test of a row, excluded ids aside (those are
// dropped after ranking). The caller holds x.mu.
func (x *index) allow(f papersearch.Filter) func(row int) bool {
	venues := map[string]bool{}
	for _, v := range f.Venues {
		venues[storage.VenueKey(v)] = true
	}
	author := storage.AuthorWords(f.Author)
	tags := storage.TagKeys(f.Tags)
	var only map[int]bool
	if len(f.Only) > 0 {
		only = x.rowsOf(f.Only)
	}
	by, lo, hi, dated := storage.DateRange(f)
	return func(row int) bool {
		if x.ids[row] == "" || only != nil && !only[row] {
			return false
		}
		if dated && !storage.InDateRange(by, lo, hi, x.days[row], x.added[row]) {
			return false
		}
		y := int(x.years[row])
		if f.YearMin != 0 && y < f.YearMin || f.YearMax != 0 && y > f.YearMax {
			return false
		}
		if len(venues) > 0 && !venues[x.venues[row]] {
			return false
		}
		if len(tags) > 0 && !slices.ContainsFunc(x.tags[row], func(t string) bool { return slices.Contains(tags, t) }) {
			return false
		}
		if len(author) > 0 {
			for _, name := range x.authors[row] {
				if storage.AuthorMatches(name, author) {
					return true
				}
			}
			return false
		}
		return true
	}
}

// rowsOf maps the live rows of ids. The caller holds x.mu.
func (x *index) rowsOf(ids []string) map[int]bool {
	out := make(map[int]bool, len(ids))
	for _, id := range ids {
		if r, ok := x.rows[id]; ok {
			out[r] = true
		}
	}
	return out
}

// lexical ranks the allowed papers by BM25 for the analysed query terms
// and keeps the k best.
func (x *index) lexical(ctx context.Context, terms []string, k int, f papersearch.Filter) (storage.Matches, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	buf, _ := x.scores.Get().(*lexScratch)
	if buf == nil {
		buf = new(lexScratch)
	}
	if cap(buf.scores) < len(x.ids) {
		buf.scores = make([]float32, len(x.ids))
	}
	scores := buf.scores[:len(x.ids)]
	excluded := x.rowsOf(f.Exclude)
	touched := buf.touched[:0]
	defer func() { buf.touched = touched[:0]; x.scores.Put(buf) }()
	var scored []lexical.WeightedTerm
	var ideal float64
	if len(f.Only) > 0 {
		// A few papers named: look each one up rather than walk the
		// postings of every term (allow tests the other fields only; the
		// rows are those named).
		others := f
		others.Only = nil
		allow := x.allow(others)
		var rows []int
		for r := range x.rowsOf(f.Only) {
			if allow(r) {
				rows = append(rows, r)
			}
		}
		scored, ideal = x.lex.ScoreRows(terms, rows, scores)
		for _, r := range rows {
			if scores[r] > 0 {
				touched = append(touched, int32(r))
			}
		}
	} else {
		var allow func(int) bool
		if !storage.FieldsFree(f) {
			allow = x.allow(f)
		}
		touched, scored, ideal = x.lex.Score(terms, allow, scores, touched)
	}
	top := newTopK(k, len(touched))
	for _, r := range touched {
		// The exclusions (a similar-paper query's own paper) are looked up
		// only for the rows the top would keep, not every row matched.
		if c := (storage.Candidate{ID: x.ids[r], Score: scores[r]}); top.beats(c) && !excluded[int(r)] {
			top.push(c)
		}
		scores[r] = 0
	}
	return storage.Matches{Candidates: top.sorted(), Ideal: ideal, Terms: scored}, ctx.Err()
}
