package sqlite

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/storage"
	"github.com/papersearch/papersearch/search/storetest"
)

// fill puts n random papers into x, in batches, and returns them as
// documents (for storetest.Exact). Paper i has year 2000+i%20 and, if i is
// even, the word "even" in its abstract.
func fill(x *index, n int) []storage.Document {
	docs := make([]storage.Document, n)
	for start := 0; start < n; start += 1000 {
		var batch []entry
		for i := start; i < min(start+1000, n); i++ {
			p := papersearch.Paper{ID: fmt.Sprintf("p%05d", i), Title: "paper", Year: 2000 + i%20,
				Venue: []string{"ICML", "NeurIPS"}[i%2], Authors: []string{fmt.Sprintf("Ada Lovelace%d", i%7)}}
			if i%2 == 0 {
				p.Abstract = "even"
			}
			docs[i] = storage.Document{Paper: p, Vector: storetest.RandomUnit(uint64(i), x.dim)}
			batch = append(batch, entry{paper: p, vector: docs[i].Vector, terms: lexical.Analyze(p.Text())})
		}
		x.put(batch)
	}
	return docs
}

// TestIndexNearestIsExact: the two-pass search (int8 codes, then float32
// rescoring) returns the brute-force top k, on one core and on the
// parallel first pass of a large index, with and without a filter, the
// index sized for its rows or grown to them across its matrices' chunks.
func TestIndexNearestIsExact(t *testing.T) {
	ctx := context.Background()
	for _, size := range [][2]int{{3000, 3000}, {parallelScanRows + 500, parallelScanRows + 500}, {parallelScanRows + 500, 0}} {
		n := size[0]
		x := newIndex(16, 0, size[1])
		docs := fill(x, n)
		recent := func(d storage.Document) bool { return d.Paper.Year >= 2015 }
		for q := range 20 {
			v := storetest.RandomUnit(uint64(1_000_000+q), x.dim)
			got, err := x.nearest(ctx, v, 10, papersearch.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if want := storetest.Exact(v, docs, 10); !slices.Equal(got, want) {
				t.Fatalf("%d rows, query %d: nearest = %v, want %v", n, q, got, want)
			}
			got, _ = x.nearest(ctx, v, 10, papersearch.Filter{YearMin: 2015})
			if want := storetest.Exact(v, slices.DeleteFunc(slices.Clone(docs), func(d storage.Document) bool { return !recent(d) }), 10); !slices.Equal(got, want) {
				t.Fatalf("%d rows, query %d, year ≥ 2015: nearest = %v, want %v", n, q, got, want)
			}
		}
	}
}

// TestIndexNearestMany: several queries in one pass find what each finds
// alone, whatever their depths, and a query zero past its first
// dimensions (a recommendation's core) finds the brute-force top k.
func TestIndexNearestMany(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{3000, parallelScanRows + 500} {
		x := newIndex(16, 0, n)
		docs := fill(x, n)
		short := storetest.RandomUnit(7, 10)
		vs := [][]float32{storetest.RandomUnit(1, 16), append(short, make([]float32, 6)...), storetest.RandomUnit(2, 16)}
		ks := []int{10, 3, 40}
		f := papersearch.Filter{YearMin: 2005, Exclude: []string{"p00004"}}
		got, err := x.nearestMany(ctx, vs, ks, f)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vs {
			alone, err := x.nearest(ctx, v, ks[i], f)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got[i], alone) {
				t.Errorf("%d rows, query %d: in one pass %v, alone %v", n, i, got[i], alone)
			}
			kept := slices.DeleteFunc(slices.Clone(docs), func(d storage.Document) bool { return d.Paper.Year < 2005 || d.Paper.ID == "p00004" })
			want := storetest.Exact(v, kept, ks[i])
			if len(got[i]) != len(want) {
				t.Fatalf("%d rows, query %d: %d found, want %d", n, i, len(got[i]), len(want))
			}
			for j := range want {
				if got[i][j].ID != want[j].ID || math.Abs(float64(got[i][j].Score-want[j].Score)) > 1e-5 {
					t.Errorf("%d rows, query %d, hit %d: %v, want %v", n, i, j, got[i][j], want[j])
				}
			}
		}
	}
}

// TestIndexRetire: a replaced or removed paper leaves every retrieval, and
// a rebuild is asked for once retired rows are a quarter of all (and at
// least compactRetired).
func TestIndexRetire(t *testing.T) {
	ctx := context.Background()
	x := newIndex(8, 0, 0)
	docs := fill(x, 4*compactRetired)
	if x.remove("no-such-paper") || x.count() != len(docs) {
		t.Fatalf("removing an unknown id: count %d", x.count())
	}
	for i := range compactRetired - 1 {
		if x.remove(docs[i].Paper.ID) {
			t.Fatalf("rebuild asked for after %d of %d rows retired", i+1, len(docs))
		}
	}
	if !x.remove(docs[compactRetired-1].Paper.ID) {
		t.Errorf("no rebuild asked for with %d of %d rows retired", compactRetired, len(docs))
	}
	if x.count() != len(docs)-compactRetired {
		t.Errorf("count = %d, want %d", x.count(), len(docs)-compactRetired)
	}
	if _, ok := x.vector(docs[0].Paper.ID); ok {
		t.Error("a removed paper still has a vector")
	}
	got, _ := x.nearest(ctx, docs[0].Vector, 1, papersearch.Filter{})
	if got[0].ID == docs[0].Paper.ID {
		t.Error("a removed paper is still found by its own vector")
	}
	// Replacing a paper retires its old row: the old vector no longer
	// finds it first, the new one does, and the count stays.
	last := docs[len(docs)-1]
	moved := storetest.RandomUnit(42_000, x.dim)
	x.put([]entry{{paper: last.Paper, vector: moved, terms: lexical.Analyze(last.Paper.Text())}})
	if got, _ := x.nearest(ctx, moved, 1, papersearch.Filter{}); got[0].ID != last.Paper.ID || got[0].Score < 0.9999 {
		t.Errorf("the replaced vector finds %v", got)
	}
	if x.count() != len(docs)-compactRetired {
		t.Errorf("count after a replacement = %d", x.count())
	}
}

// TestIndexFilters: year, venue (any case), author prefix words and
// excluded ids, in dense and lexical retrieval alike.
func TestIndexFilters(t *testing.T) {
	ctx := context.Background()
	x := newIndex(8, 0, 0)
	docs := fill(x, 200)
	byID := map[string]papersearch.Paper{}
	for _, d := range docs {
		byID[d.Paper.ID] = d.Paper
	}
	for _, tt := range []struct {
		name string
		f    papersearch.Filter
		ok   func(p papersearch.Paper) bool
	}{
		{"years", papersearch.Filter{YearMin: 2005, YearMax: 2006}, func(p papersearch.Paper) bool { return p.Year == 2005 || p.Year == 2006 }},
		{"venue", papersearch.Filter{Venues: []string{" icml "}}, func(p papersearch.Paper) bool { return p.Venue == "ICML" }},
		{"author", papersearch.Filter{Author: "lovelace3 ad"}, func(p papersearch.Paper) bool { return p.Authors[0] == "Ada Lovelace3" }},
		{"exclude", papersearch.Filter{Exclude: []string{"p00000", "p00002"}}, func(p papersearch.Paper) bool { return p.ID != "p00000" && p.ID != "p00002" }},
	} {
		dense, err := x.nearest(ctx, docs[0].Vector, 200, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		lex, err := x.lexical(ctx, []string{"even"}, 200, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		var wantDense, wantLex int
		for _, p := range byID {
			if tt.ok(p) {
				wantDense++
				if p.Abstract == "even" {
					wantLex++
				}
			}
		}
		if len(dense) != wantDense || len(lex.Candidates) != wantLex {
			t.Errorf("%s: dense %d, lexical %d papers; want %d and %d", tt.name, len(dense), len(lex.Candidates), wantDense, wantLex)
		}
		for _, c := range append(dense, lex.Candidates...) {
			if !tt.ok(byID[c.ID]) {
				t.Errorf("%s: %s passes the filter: %+v", tt.name, c.ID, byID[c.ID])
			}
		}
	}
}

// vector returns a copy of the vector of id, for the tests to inspect (the
// store itself reads vectors through nearest and Get).
func (x *index) vector(id string) ([]float32, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	r, ok := x.rows[id]
	if !ok {
		return nil, false
	}
	return slices.Clone(x.vectors.row(r)), true
}

// TestIndexSplitCodes: with a query prefix's codes kept apart, split once
// the papers are in (resplit) or before they arrive (an index made so),
// every query, shorter than the split, as long, or longer, finds exactly
// what it finds with the codes whole.
func TestIndexSplitCodes(t *testing.T) {
	ctx := context.Background()
	queries := [][]float32{storetest.RandomUnit(1, 16), append(storetest.RandomUnit(2, 10), make([]float32, 6)...),
		append(storetest.RandomUnit(3, 6), make([]float32, 10)...)}
	answers := func(x *index) [][]storage.Candidate {
		var out [][]storage.Candidate
		for _, v := range queries {
			got, err := x.nearest(ctx, v, 10, papersearch.Filter{YearMin: 2003})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, got)
		}
		return out
	}
	whole := newIndex(16, 0, 0)
	fill(whole, 3000)
	want := answers(whole)
	for _, split := range []int{10, 8, 3, 16} {
		x := newIndex(16, 0, 0)
		fill(x, 3000)
		x.resplit(split)
		if got := answers(x); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("resplit at %d: %v, want %v", split, got, want)
		}
		made := newIndex(16, split, 0)
		fill(made, 3000)
		if got := answers(made); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("made split at %d: %v, want %v", split, got, want)
		}
	}
}

// TestIndexPassesTogether: queries arriving together, more than there are
// cores, are scanned in shared passes (their jobs queued behind the
// running ones); each finds exactly what it finds alone, whatever its
// filter and depth, and a query whose context has ended is answered with
// its error without holding the others up.
func TestIndexPassesTogether(t *testing.T) {
	// Narrow rows go through the plain loops; wide ones through the SIMD
	// kernels, four queries at a time where their codes before the split
	// are as long (those of the core, and those past it).
	for _, shape := range [][2]int{{16, 10}, {192, 128}} {
		dim, split := shape[0], shape[1]
		ctx := context.Background()
		x := newIndex(dim, split, 0)
		fill(x, parallelScanRows+500)
		type query struct {
			v []float32
			k int
			f papersearch.Filter
		}
		var queries []query
		for i := range 48 {
			v := storetest.RandomUnit(uint64(500+i), dim)
			if i%3 == 1 {
				v = append(storetest.RandomUnit(uint64(500+i), split), make([]float32, dim-split)...)
			}
			f := papersearch.Filter{}
			if i%2 == 0 {
				f = papersearch.Filter{YearMin: 2000 + i%20, Exclude: []string{"p00002"}}
			}
			queries = append(queries, query{v, 5 + i%20, f})
		}
		alone := make([][]storage.Candidate, len(queries))
		for i, q := range queries {
			var err error
			if alone[i], err = x.nearest(ctx, q.v, q.k, q.f); err != nil {
				t.Fatal(err)
			}
		}
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		var wg sync.WaitGroup
		// The last round arrives while every pass is taken, so that all of
		// its queries queue and are scanned in one pass.
		for round := range 3 {
			if round == 2 {
				wg.Wait()
				x.passes.mu.Lock()
				x.passes.running = math.MaxInt32
				x.passes.mu.Unlock()
			}
			for i, q := range queries {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if i%7 == 3 {
						if _, err := x.nearest(cancelled, q.v, q.k, q.f); !errors.Is(err, context.Canceled) {
							t.Errorf("round %d, query %d with its context ended: %v", round, i, err)
						}
						return
					}
					got, err := x.nearest(ctx, q.v, q.k, q.f)
					if err != nil || !slices.Equal(got, alone[i]) {
						t.Errorf("round %d, query %d together: %v %v, alone %v", round, i, got, err, alone[i])
					}
				}()
			}
		}
		for {
			x.passes.mu.Lock()
			queued := len(x.passes.queue)
			x.passes.mu.Unlock()
			if queued == len(queries) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		x.passes.next(x) // the taken pass ends: the queued ones run together
		wg.Wait()
		x.passes.mu.Lock()
		x.passes.running -= math.MaxInt32 - 1 // the taken pass's place, freed
		x.passes.mu.Unlock()
		if n := x.passes.shared.Load(); n < int64(len(queries)) {
			t.Errorf("%d queries were scanned in a pass shared with others, want at least %d", n, len(queries))
		}
	}
}

// TestIndexPassJoinsRunnableQueries: queries whose callers are runnable
// when a pass is about to begin join it rather than each scanning alone
// after it: the pass yields once first. On one processor the callers run
// one after another, so without the yield every pass would be a single
// query's.
func TestIndexPassJoinsRunnableQueries(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx := context.Background()
	x := newIndex(16, 10, 0)
	fill(x, 300)
	const n = 8
	alone := make([][]storage.Candidate, n)
	for i := range n {
		var err error
		if alone[i], err = x.nearest(ctx, storetest.RandomUnit(uint64(900+i), 16), 5, papersearch.Filter{}); err != nil {
			t.Fatal(err)
		}
	}
	before := x.passes.shared.Load()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := x.nearest(ctx, storetest.RandomUnit(uint64(900+i), 16), 5, papersearch.Filter{})
			if err != nil || !slices.Equal(got, alone[i]) {
				t.Errorf("query %d together: %v %v, alone %v", i, got, err, alone[i])
			}
		}()
	}
	wg.Wait()
	if shared := x.passes.shared.Load() - before; shared < n/2 {
		t.Errorf("%d of %d queries runnable at once shared a pass, want at least %d", shared, n, n/2)
	}
}

// TestIndexNearestByTags: a filter naming tags finds the brute-force top k
// of the papers holding any of them, whether they are few enough to be
// read from the tags' rows (a collection) or many enough for a first
// pass, with other fields and exclusions beside; a paper retagged or
// removed leaves its old tags.
func TestIndexNearestByTags(t *testing.T) {
	ctx := context.Background()
	x := newIndex(16, 0, 0)
	const n = 3000
	docs := make([]storage.Document, n)
	var batch []entry
	for i := range n {
		p := papersearch.Paper{ID: fmt.Sprintf("p%05d", i), Title: "paper", Year: 2000 + i%20}
		switch {
		case i%97 == 0:
			p.Tags = []string{"reading", "later"}
		case i%41 == 0:
			p.Tags = []string{"reading"}
		case i%3 == 0:
			p.Tags = []string{"many"}
		}
		docs[i] = storage.Document{Paper: p, Vector: storetest.RandomUnit(uint64(i), x.dim)}
		batch = append(batch, entry{paper: p, vector: docs[i].Vector})
	}
	x.put(batch)
	// Retag one paper of "reading" and remove another.
	moved := docs[41]
	moved.Paper.Tags = []string{"elsewhere"}
	x.put([]entry{{paper: moved.Paper, vector: moved.Vector}})
	docs[41] = moved
	x.remove(docs[82].Paper.ID)
	docs = slices.Delete(docs, 82, 83)

	holds := func(d storage.Document, tags ...string) bool {
		return slices.ContainsFunc(d.Paper.Tags, func(t string) bool { return slices.Contains(tags, t) })
	}
	for _, tc := range []struct {
		f    papersearch.Filter
		keep func(storage.Document) bool
	}{
		{papersearch.Filter{Tags: []string{"Reading"}}, func(d storage.Document) bool { return holds(d, "reading") }},
		{papersearch.Filter{Tags: []string{"reading", "later"}, YearMin: 2010, Exclude: []string{"p00097"}},
			func(d storage.Document) bool {
				return holds(d, "reading", "later") && d.Paper.Year >= 2010 && d.Paper.ID != "p00097"
			}},
		{papersearch.Filter{Tags: []string{"many"}}, func(d storage.Document) bool { return holds(d, "many") }},
		{papersearch.Filter{Tags: []string{"nobody"}}, func(storage.Document) bool { return false }},
	} {
		kept := slices.DeleteFunc(slices.Clone(docs), func(d storage.Document) bool { return !tc.keep(d) })
		for q := range 5 {
			v := storetest.RandomUnit(uint64(500_000+q), x.dim)
			for _, k := range []int{10, 2000} {
				got, err := x.nearest(ctx, v, k, tc.f)
				if err != nil {
					t.Fatal(err)
				}
				want := storetest.Exact(v, kept, k)
				if len(got) != len(want) {
					t.Fatalf("%+v, k %d: %d found, want %d", tc.f, k, len(got), len(want))
				}
				for i := range want {
					if got[i].ID != want[i].ID || math.Abs(float64(got[i].Score-want[i].Score)) > 1e-5 {
						t.Fatalf("%+v, k %d, hit %d: %v, want %v", tc.f, k, i, got[i], want[i])
					}
				}
			}
		}
	}
	if rows, _ := x.taggedRows(papersearch.Filter{Tags: []string{"many"}}, math.MaxInt); len(rows) <= max(RescoreFactor*10, MinRescore) {
		t.Fatalf("%d rows of %q: too few to test the first pass", len(rows), "many")
	}
}
