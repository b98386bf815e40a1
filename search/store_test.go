package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/lexical"
)

var testModel = embed.ModelInfo{Name: "test-model", Dim: 8}

// randomUnit returns a deterministic pseudo-random unit vector.
func randomUnit(seed uint64, dim int) []float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	embed.Normalize(v)
	return v
}

func testDoc(i int) Document {
	p := papersearch.Paper{ID: fmt.Sprintf("p%03d", i), Title: fmt.Sprintf("Paper %d", i),
		Abstract: fmt.Sprintf("Abstract number %d.", i), Authors: []string{"A. Author"}, Venue: "TestConf", Year: 2000 + i%20}
	fp := FingerprintOf(p)
	return Document{Paper: p, Vector: randomUnit(uint64(i), testModel.Dim), TextHash: fp.TextHash, PaperHash: fp.PaperHash}
}

// storeConformance runs the behaviour every Store must share against a
// fresh, empty store from open.
func storeConformance(t *testing.T, open func(t *testing.T) Store) {
	ctx := context.Background()

	t.Run("UpsertGetCount", func(t *testing.T) {
		s := open(t)
		docs := []Document{testDoc(1), testDoc(2), testDoc(3)}
		if err := s.Upsert(ctx, docs); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.Count(ctx); n != 3 {
			t.Errorf("Count = %d, want 3", n)
		}
		got, err := s.Get(ctx, "p002")
		if err != nil {
			t.Fatal(err)
		}
		if got.Paper.Title != "Paper 2" || got.Paper.Year != 2002 || len(got.Paper.Authors) != 1 || got.TextHash != docs[1].TextHash {
			t.Errorf("Get = %+v", got.Paper)
		}
		if embed.Dot(got.Vector, docs[1].Vector) < 0.9999 {
			t.Error("stored vector differs from the one given")
		}
		// Upserting the same id replaces it and does not add a row.
		changed := testDoc(2)
		changed.Paper.Title = "Renamed"
		if err := s.Upsert(ctx, []Document{changed}); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.Count(ctx); n != 3 {
			t.Errorf("Count after replace = %d, want 3", n)
		}
		if got, _ := s.Get(ctx, "p002"); got.Paper.Title != "Renamed" {
			t.Errorf("title after replace = %q", got.Paper.Title)
		}
	})

	t.Run("NotFound", func(t *testing.T) {
		s := open(t)
		if _, err := s.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get unknown: err = %v, want ErrNotFound", err)
		}
		if err := s.Delete(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Delete unknown: err = %v, want ErrNotFound", err)
		}
	})

	t.Run("WrongDimension", func(t *testing.T) {
		s := open(t)
		d := testDoc(1)
		d.Vector = d.Vector[:4]
		if err := s.Upsert(ctx, []Document{testDoc(2), d}); !errors.Is(err, ErrDimension) {
			t.Errorf("Upsert short vector: err = %v, want ErrDimension", err)
		}
		if n, _ := s.Count(ctx); n != 0 {
			t.Errorf("a rejected batch stored %d papers", n)
		}
		if _, err := s.Nearest(ctx, make([]float32, 3), 5, papersearch.Filter{}); !errors.Is(err, ErrDimension) {
			t.Errorf("Nearest short vector: err = %v, want ErrDimension", err)
		}
	})

	t.Run("NearestIsExactAndExcludes", func(t *testing.T) {
		s := open(t)
		var docs []Document
		for i := range 50 {
			docs = append(docs, testDoc(i))
		}
		if err := s.Upsert(ctx, docs); err != nil {
			t.Fatal(err)
		}
		q := docs[17].Vector
		got, err := s.Nearest(ctx, q, 5, papersearch.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 5 || got[0].ID != "p017" || got[0].Score < 0.9999 {
			t.Fatalf("Nearest = %v, want p017 first with score 1", got)
		}
		// Brute force agrees on the order.
		top := newTopK(5)
		for _, d := range docs {
			top.push(Candidate{ID: d.Paper.ID, Score: embed.Dot(q, d.Vector)})
		}
		for i, c := range top.sorted() {
			if got[i].ID != c.ID {
				t.Errorf("rank %d: %s, brute force says %s", i+1, got[i].ID, c.ID)
			}
		}
		for i := 1; i < len(got); i++ {
			if got[i].Score > got[i-1].Score {
				t.Errorf("scores not descending: %v", got)
			}
		}
		ex, _ := s.Nearest(ctx, q, 5, papersearch.Filter{Exclude: []string{"p017"}})
		for _, c := range ex {
			if c.ID == "p017" {
				t.Error("excluded id came back")
			}
		}
		if len(ex) != 5 {
			t.Errorf("with exclusion got %d results, want 5", len(ex))
		}
		// From the stored vector: the same as from the vector itself.
		to, err := s.NearestTo(ctx, "p017", 5, papersearch.Filter{Exclude: []string{"p017"}})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ids(to)) != fmt.Sprint(ids(ex)) {
			t.Errorf("NearestTo(p017) = %v, Nearest from its vector %v", ids(to), ids(ex))
		}
		if _, err := s.NearestTo(ctx, "p999", 5, papersearch.Filter{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("NearestTo an unknown id: %v, want ErrNotFound", err)
		}
		all, _ := s.Nearest(ctx, q, 500, papersearch.Filter{})
		if len(all) != 50 {
			t.Errorf("k larger than the store: got %d, want 50", len(all))
		}
	})

	t.Run("Delete", func(t *testing.T) {
		s := open(t)
		docs := []Document{testDoc(1), testDoc(2), testDoc(3)}
		if err := s.Upsert(ctx, docs); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, "p001"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "p001"); !errors.Is(err, ErrNotFound) {
			t.Errorf("deleted paper still there: %v", err)
		}
		got, _ := s.Nearest(ctx, docs[2].Vector, 10, papersearch.Filter{})
		if len(got) != 2 || got[0].ID != "p003" {
			t.Errorf("after delete Nearest = %v", got)
		}
	})

	t.Run("LexicalAndFilters", func(t *testing.T) {
		s := open(t)
		mk := func(i int, title, abstract string, authors []string, venue string, year int) Document {
			d := testDoc(i)
			d.Paper = papersearch.Paper{ID: fmt.Sprintf("p%03d", i), Title: title, Abstract: abstract, Authors: authors, Venue: venue, Year: year}
			fp := FingerprintOf(d.Paper)
			d.TextHash, d.PaperHash = fp.TextHash, fp.PaperHash
			return d
		}
		docs := []Document{
			mk(1, "Graph neural networks", "Message passing over molecular graphs predicts properties of graphs.", []string{"Geoffrey Hinton"}, "ICML", 2019),
			mk(2, "Speech recognition", "Transformers transcribe speech; a graph of phonemes helps.", []string{"Yann LeCun"}, "NeurIPS", 2021),
			mk(3, "Protein folding", "Residue contact maps fold proteins.", []string{"Ada Lovelace", "Geoff Smith"}, "ICLR", 2023),
			mk(4, "Graph graph graph", "Graphs, graphs and more graph theory for graph people.", []string{"Alan Turing"}, "ICML", 2023),
		}
		if err := s.Upsert(ctx, docs); err != nil {
			t.Fatal(err)
		}
		ids := func(m Matches) string {
			var out []string
			for _, c := range m.Candidates {
				out = append(out, c.ID)
			}
			return strings.Join(out, ",")
		}
		// The ideal score of "graph zebra": each term's idf, zebra's as a
		// term no paper holds; it follows every write.
		ideal := func(when string, want float64) {
			t.Helper()
			m, err := s.Lexical(ctx, lexical.Analyze("graph zebra"), 10, papersearch.Filter{})
			if err != nil || !near(m.Ideal, want) {
				t.Errorf("%s: ideal of graph zebra = %v (%v), want %v", when, m.Ideal, err, want)
			}
		}
		ideal("4 papers, 3 with graph", math.Log(10.0/7)+math.Log(10))
		m, err := s.Lexical(ctx, lexical.Analyze("graphs"), 10, papersearch.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		got := m.Candidates
		if ids(m) != "p004,p001,p002" {
			t.Errorf("Lexical(graphs) = %s (%v), want p004,p001,p002", ids(m), got)
		}
		for i := 1; i < len(got); i++ {
			if got[i].Score > got[i-1].Score || got[i].Score <= 0 {
				t.Errorf("lexical scores not positive and descending: %v", got)
			}
		}
		if got, _ := s.Lexical(ctx, lexical.Analyze("zebra"), 10, papersearch.Filter{}); len(got.Candidates) != 0 || !near(got.Ideal, math.Log(10)) {
			t.Errorf("Lexical(zebra) = %+v, want nothing, ideal ln 10", got)
		}
		for _, tt := range []struct {
			f    papersearch.Filter
			want string
		}{
			{papersearch.Filter{YearMin: 2021}, "p004,p002"},
			{papersearch.Filter{YearMax: 2020}, "p001"},
			{papersearch.Filter{Venues: []string{"icml"}}, "p004,p001"},
			{papersearch.Filter{Author: "geoff"}, "p001"},
			{papersearch.Filter{Author: "lecun yann"}, "p002"},
			{papersearch.Filter{Exclude: []string{"p004"}}, "p001,p002"},
			{papersearch.Filter{YearMin: 2030}, ""},
		} {
			got, err := s.Lexical(ctx, lexical.Analyze("graph"), 10, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if ids(got) != tt.want {
				t.Errorf("Lexical(graph, %+v) = %s, want %s", tt.f, ids(got), tt.want)
			}
		}
		// The same filters apply to dense retrieval.
		all, _ := s.Nearest(ctx, docs[0].Vector, 10, papersearch.Filter{Author: "geoff", YearMin: 2020})
		if ids(Matches{Candidates: all}) != "p003" {
			t.Errorf("Nearest with author and year filter = %v, want p003", all)
		}
		all, _ = s.Nearest(ctx, docs[0].Vector, 10, papersearch.Filter{Venues: []string{"NeurIPS", "ICLR"}})
		if len(all) != 2 {
			t.Errorf("Nearest with venues = %v, want 2 papers", all)
		}
		// Replacing a paper's text moves it in the lexical index.
		changed := mk(4, "Speech", "Nothing about that topic.", nil, "ICML", 2023)
		if err := s.Upsert(ctx, []Document{changed}); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Lexical(ctx, lexical.Analyze("graph"), 10, papersearch.Filter{}); ids(got) != "p001,p002" {
			t.Errorf("after replacing p004: %s", ids(got))
		}
		ideal("p004 replaced, 2 with graph", math.Ln2+math.Log(10))
		if err := s.Delete(ctx, "p001"); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Lexical(ctx, lexical.Analyze("graph"), 10, papersearch.Filter{}); ids(got) != "p002" {
			t.Errorf("after deleting p001: %s", ids(got))
		}
		ideal("p001 deleted, 3 papers, 1 with graph", math.Log(8.0/3)+math.Log(8))
	})

	t.Run("Scroll", func(t *testing.T) {
		s := open(t)
		var docs []Document
		for i := range 25 {
			docs = append(docs, testDoc(i))
		}
		if err := s.Upsert(ctx, docs); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		pages := 0
		for cursor := ""; ; pages++ {
			page, next, err := s.Scroll(ctx, cursor, 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range page {
				if seen[d.Paper.ID] {
					t.Errorf("scroll repeated %s", d.Paper.ID)
				}
				seen[d.Paper.ID] = true
				if len(d.Vector) != testModel.Dim || d.Paper.Title == "" {
					t.Errorf("scrolled document incomplete: %+v", d.Paper)
				}
			}
			if next == "" {
				break
			}
			cursor = next
		}
		if len(seen) != 25 || pages != 2 {
			t.Errorf("scroll saw %d papers in %d pages, want 25 in 3", len(seen), pages+1)
		}
	})

	t.Run("Fingerprints", func(t *testing.T) {
		s := open(t)
		if err := s.Upsert(ctx, []Document{testDoc(1), testDoc(2)}); err != nil {
			t.Fatal(err)
		}
		papers, err := s.Lookup(ctx, []string{"p002", "p404", "p001"})
		if err != nil {
			t.Fatal(err)
		}
		if len(papers) != 2 || papers["p002"].Title != "Paper 2" || papers["p001"].Year != 2001 {
			t.Errorf("Lookup = %+v", papers)
		}
		fps, err := s.Fingerprints(ctx, []string{"p001", "p002", "p404"})
		if err != nil {
			t.Fatal(err)
		}
		if len(fps) != 2 || fps["p001"].PaperHash != testDoc(1).PaperHash {
			t.Errorf("Fingerprints = %v", fps)
		}
	})
}

func TestSQLiteConformance(t *testing.T) {
	storeConformance(t, func(t *testing.T) Store {
		s, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "papers.db"), testModel)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestSQLiteSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "papers.db")
	s, err := OpenSQLite(ctx, path, testModel)
	if err != nil {
		t.Fatal(err)
	}
	docs := []Document{testDoc(1), testDoc(2), testDoc(3)}
	if err := s.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "p002"); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = OpenSQLite(ctx, path, testModel)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, _ := s.Count(ctx); n != 2 {
		t.Fatalf("after reopen Count = %d, want 2", n)
	}
	got, _ := s.Nearest(ctx, docs[2].Vector, 1, papersearch.Filter{})
	if len(got) != 1 || got[0].ID != "p003" {
		t.Errorf("after reopen Nearest = %v", got)
	}

	other := embed.ModelInfo{Name: "other-model", Dim: 8}
	if _, err := OpenSQLite(ctx, path, other); !errors.Is(err, ErrModelMismatch) {
		t.Errorf("open with another model: err = %v, want ErrModelMismatch", err)
	}
	wider := embed.ModelInfo{Name: testModel.Name, Dim: 16}
	if _, err := OpenSQLite(ctx, path, wider); !errors.Is(err, ErrModelMismatch) {
		t.Errorf("open with another dimension: err = %v, want ErrModelMismatch", err)
	}
}

// TestSQLiteAnalysesTermsOnce: a store written before analysed terms were
// stored (their column empty) answers lexical queries after opening, from
// the text it analyses then, and keeps those terms for the next opening.
func TestSQLiteAnalysesTermsOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "papers.db")
	s, err := OpenSQLite(ctx, path, testModel)
	if err != nil {
		t.Fatal(err)
	}
	d := testDoc(1)
	d.Paper.Abstract = "Gradient clipping stabilises recurrent networks."
	if err := s.Upsert(ctx, []Document{d, testDoc(2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE papers SET terms = ''`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for round := range 2 {
		s, err = OpenSQLite(ctx, path, testModel)
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.Lexical(ctx, lexical.Analyze("clipping gradients"), 5, papersearch.Filter{})
		if err != nil || len(m.Candidates) != 1 || m.Candidates[0].ID != "p001" {
			t.Errorf("opening %d: lexical = %+v, %v; want p001 alone", round, m.Candidates, err)
		}
		var empty int
		s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM papers WHERE terms = ''`).Scan(&empty)
		if empty != 0 {
			t.Errorf("opening %d: %d papers still without terms", round, empty)
		}
		s.Close()
	}
}

// TestSQLiteConcurrentWritesOfOneID writes one id from many goroutines at
// once, each with another abstract and vector, while readers run lexical
// and dense queries. Afterwards the in-memory index must hold what the file
// holds, before and after a reopen: a change is applied to memory in the
// order it was committed to disk.
func TestSQLiteConcurrentWritesOfOneID(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "papers.db")
	s, err := OpenSQLite(ctx, path, testModel)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	if err := s.Upsert(ctx, []Document{testDoc(1), testDoc(2)}); err != nil {
		t.Fatal(err)
	}
	variant := func(i int) Document {
		// Each variant has a word of its own, so lexical search tells them apart.
		p := papersearch.Paper{ID: "same", Title: "Contested paper",
			Abstract: fmt.Sprintf("A contested abstract about %s.", variantWord(i))}
		fp := FingerprintOf(p)
		return Document{Paper: p, Vector: randomUnit(uint64(1000+i), testModel.Dim), TextHash: fp.TextHash, PaperHash: fp.PaperHash}
	}
	const writers, rounds = 8, 40
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for r := range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.Lexical(ctx, lexical.Analyze(variantWord(n%writers)+" contested"), 5, papersearch.Filter{}); err != nil {
					t.Error(err)
				}
				if _, err := s.Nearest(ctx, randomUnit(uint64(r), testModel.Dim), 3, papersearch.Filter{}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for round := range rounds {
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.Upsert(ctx, []Document{variant(w)}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if !memoryMatchesDisk(t, s, variant, writers) {
			t.Fatalf("round %d: memory and disk disagree", round)
		}
	}
	close(stop)
	readers.Wait()
	before, _ := s.Get(ctx, "same")
	s.Close()
	if s, err = OpenSQLite(ctx, path, testModel); err != nil {
		t.Fatal(err)
	}
	if !memoryMatchesDisk(t, s, variant, writers) {
		t.Fatal("after reopen: memory and disk disagree")
	}
	if after, _ := s.Get(ctx, "same"); after.Paper.Abstract != before.Paper.Abstract {
		t.Errorf("reopened file holds %q, the running store held %q", after.Paper.Abstract, before.Paper.Abstract)
	}
	if n, _ := s.Count(ctx); n != 3 {
		t.Errorf("Count = %d, want 3", n)
	}
}

func variantWord(i int) string {
	return []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}[i]
}

// memoryMatchesDisk reports whether the in-memory vector and lexical terms
// of "same" are those of the version in the file.
func memoryMatchesDisk(t *testing.T, s *SQLite, variant func(int) Document, writers int) bool {
	t.Helper()
	ctx := context.Background()
	disk, err := s.Get(ctx, "same")
	if err != nil {
		t.Fatal(err)
	}
	s.mu.RLock()
	row, ok := s.rows["same"]
	var mem []float32
	if ok {
		mem = append(mem, s.vectors[row*testModel.Dim:(row+1)*testModel.Dim]...)
	}
	s.mu.RUnlock()
	if !ok || embed.Dot(mem, disk.Vector) < 0.9999 {
		t.Errorf("the in-memory vector of %q is not the stored one (%q)", "same", disk.Paper.Abstract)
		return false
	}
	ok = true
	for w := range writers {
		m, err := s.Lexical(ctx, lexical.Analyze(variantWord(w)), 5, papersearch.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		found := len(m.Candidates) == 1 && m.Candidates[0].ID == "same"
		if want := variant(w).Paper.Abstract == disk.Paper.Abstract; found != want {
			t.Errorf("lexical search for %q finds the paper: %v; the stored abstract is %q", variantWord(w), found, disk.Paper.Abstract)
			ok = false
		}
	}
	return ok
}

// ids lists the candidates' ids in order.
func ids(cs []Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}
