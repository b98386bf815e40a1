// Package storetest is the behaviour every search.Store shares, as one
// suite that each store's tests run against a fresh store of their own.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/roles"
)

// Model is the model of the suite's vectors: 8 dimensions, so a store's
// tests stay small.
var Model = embed.ModelInfo{Name: "test-model", Dim: 8}

// RandomUnit returns a deterministic pseudo-random unit vector.
func RandomUnit(seed uint64, dim int) []float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	embed.Normalize(v)
	return v
}

// Doc returns the i-th test document: paper "p%03d" of year 2000+i%20 in
// venue TestConf, with a random unit vector.
func Doc(i int) search.Document {
	p := papersearch.Paper{ID: fmt.Sprintf("p%03d", i), Title: fmt.Sprintf("Paper %d", i),
		Abstract: fmt.Sprintf("Abstract number %d.", i), Authors: []string{"A. Author"}, Venue: "TestConf", Year: 2000 + i%20}
	fp := search.FingerprintOf(p)
	return search.Document{Paper: p, Vector: RandomUnit(uint64(i), Model.Dim), TextHash: fp.TextHash, PaperHash: fp.PaperHash}
}

// Run runs the behaviour every store must share, each case against a
// fresh, empty store from open.
func Run(t *testing.T, open func(t *testing.T) search.Store) {
	t.Run("PagesAreOneRanking", func(t *testing.T) { pagesAreOneRanking(t, open(t)) })
	t.Run("PutIsAllOrNothing", func(t *testing.T) { putIsAllOrNothing(t, open(t)) })
	t.Run("FoldsAccents", func(t *testing.T) { foldsAccents(t, open(t)) })
	t.Run("UpsertGetCount", func(t *testing.T) { upsertGetCount(t, open) })
	t.Run("KeepsEveryField", func(t *testing.T) { keepsEveryField(t, open) })
	t.Run("NotFound", func(t *testing.T) { notFound(t, open) })
	t.Run("WrongDimension", func(t *testing.T) { wrongDimension(t, open) })
	t.Run("NearestIsExactAndExcludes", func(t *testing.T) { nearestIsExactAndExcludes(t, open) })
	t.Run("Delete", func(t *testing.T) { deleteRemoves(t, open) })
	t.Run("LexicalAndFilters", func(t *testing.T) { lexicalAndFilters(t, open) })
	t.Run("Scroll", func(t *testing.T) { scroll(t, open) })
	t.Run("Fingerprints", func(t *testing.T) { fingerprints(t, open) })
	t.Run("Sentences", func(t *testing.T) { sentences(t, open) })
	t.Run("Works", func(t *testing.T) { worksFindsVersions(t, open) })
}

// upsertGetCount is Run's UpsertGetCount case.
func upsertGetCount(t *testing.T, open func(t *testing.T) search.Store) {
	ctx := context.Background()
	s := open(t)
	docs := []search.Document{Doc(1), Doc(2), Doc(3)}
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
	changed := Doc(2)
	changed.Paper.Title = "Renamed"
	if err := s.Upsert(ctx, []search.Document{changed}); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Count(ctx); n != 3 {
		t.Errorf("Count after replace = %d, want 3", n)
	}
	if got, _ := s.Get(ctx, "p002"); got.Paper.Title != "Renamed" {
		t.Errorf("title after replace = %q", got.Paper.Title)
	}
}

// keepsEveryField is Run's KeepsEveryField case.
func keepsEveryField(t *testing.T, open func(t *testing.T) search.Store) {
	ctx := context.Background()
	s := open(t)
	d := Doc(1)
	d.Paper = papersearch.Paper{ID: "doi:10.1/x", Title: "Every field", Abstract: "An abstract.", Authors: []string{"Ada Lovelace", "Alan Turing"},
		Venue: "Journal of Tests", Year: 2021, URL: "https://example.org/x", Type: papersearch.TypeJournalArticle,
		Tags: []string{"a", "b"}, Sources: []papersearch.Source{{ID: "arxiv:2101.00001", URL: "https://arxiv.org/abs/2101.00001"}}}
	if err := s.Upsert(ctx, []search.Document{d}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, d.Paper.ID)
	if err != nil || fmt.Sprintf("%+v", got.Paper) != fmt.Sprintf("%+v", d.Paper) {
		t.Errorf("Get = %+v, %v; want %+v", got.Paper, err, d.Paper)
	}
	looked, err := s.Lookup(ctx, []string{d.Paper.ID})
	if err != nil || fmt.Sprintf("%+v", looked[d.Paper.ID]) != fmt.Sprintf("%+v", d.Paper) {
		t.Errorf("Lookup = %+v, %v; want %+v", looked[d.Paper.ID], err, d.Paper)
	}
	// A field emptied is emptied.
	d.Paper.Type = ""
	if err := s.Upsert(ctx, []search.Document{d}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, d.Paper.ID); err != nil || got.Paper.Type != "" {
		t.Errorf("type after it was emptied: %q, %v", got.Paper.Type, err)
	}
}

// notFound is Run's NotFound case.
func notFound(t *testing.T, open func(t *testing.T) search.Store) {
	ctx := context.Background()
	s := open(t)
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, search.ErrNotFound) {
		t.Errorf("Get unknown: err = %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "nope"); !errors.Is(err, search.ErrNotFound) {
		t.Errorf("Delete unknown: err = %v, want ErrNotFound", err)
	}
}

// wrongDimension is Run's WrongDimension case.
func wrongDimension(t *testing.T, open func(t *testing.T) search.Store) {
	ctx := context.Background()
	s := open(t)
	d := Doc(1)
	d.Vector = d.Vector[:4]
	if err := s.Upsert(ctx, []search.Document{Doc(2), d}); !errors.Is(err, search.ErrDimension) {
		t.Errorf("Upsert short vector: err = %v, want ErrDimension", err)
	}
	if n, _ := s.Count(ctx); n != 0 {
		t.Errorf("a rejected batch stored %d papers", n)
	}
	if _, err := s.Nearest(ctx, make([]float32, 3), 5, papersearch.Filter{}); !errors.Is(err, search.ErrDimension) {
		t.Errorf("Nearest short vector: err = %v, want ErrDimension", err)
	}
}

// nearestIsExactAndExcludes is Run's NearestIsExactAndExcludes case.
func nearestIsExactAndExcludes(t *testing.T, open func(t *testing.T) search.Store) {
	ctx := context.Background()
	s, docs := filled(t, open, 50)
	q := docs[17].Vector
	got, err := s.Nearest(ctx, q, 5, papersearch.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || got[0].ID != "p017" || got[0].Score < 0.9999 {
		t.Fatalf("Nearest = %v, want p017 first with score 1", got)
	}
	// Brute force agrees on the order.
	for i, c := range Exact(q, docs, 5) {
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
	all, _ := s.Nearest(ctx, q, 500, papersearch.Filter{})
	if len(all) != 50 {
		t.Errorf("k larger than the store: got %d, want 50", len(all))
	}
}

// deleteRemoves is Run's Delete case.
func deleteRemoves(t *testing.T, open func(t *testing.T) search.Store) {
	ctx := context.Background()
	s := open(t)
	docs := []search.Document{Doc(1), Doc(2), Doc(3)}
	if err := s.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "p001"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "p001"); !errors.Is(err, search.ErrNotFound) {
		t.Errorf("deleted paper still there: %v", err)
	}
	got, _ := s.Nearest(ctx, docs[2].Vector, 10, papersearch.Filter{})
	if len(got) != 2 || got[0].ID != "p003" {
		t.Errorf("after delete Nearest = %v", got)
	}
}

// lexicalAndFilters is Run's LexicalAndFilters case.
func lexicalAndFilters(t *testing.T, open func(t *testing.T) search.Store) {
	ctx := context.Background()
	s := open(t)
	mk := func(i int, title, abstract string, authors []string, venue string, year int) search.Document {
		d := Doc(i)
		d.Paper = papersearch.Paper{ID: fmt.Sprintf("p%03d", i), Title: title, Abstract: abstract, Authors: authors, Venue: venue, Year: year}
		fp := search.FingerprintOf(d.Paper)
		d.TextHash, d.PaperHash = fp.TextHash, fp.PaperHash
		return d
	}
	docs := []search.Document{
		mk(1, "Graph neural networks", "Message passing over molecular graphs predicts properties of graphs.", []string{"Geoffrey Hinton"}, "ICML", 2019),
		mk(2, "Speech recognition", "Transformers transcribe speech; a graph of phonemes helps.", []string{"Yann LeCun"}, "NeurIPS", 2021),
		mk(3, "Protein folding", "Residue contact maps fold proteins.", []string{"Ada Lovelace", "Geoff Smith"}, "ICLR", 2023),
		mk(4, "Graph graph graph", "Graphs, graphs and more graph theory for graph people.", []string{"Alan Turing"}, "ICML", 2023),
	}
	docs[0].Paper.Tags = []string{"my-library"}
	docs[1].Paper.Tags = []string{"my-library", "neurips-2026"}
	docs[3].Paper.Tags = []string{"neurips-2026"}
	if err := s.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	ids := func(m search.Matches) string {
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
		{papersearch.Filter{Only: []string{"p002", "p004", "p003"}}, "p004,p002"},
		{papersearch.Filter{Only: []string{"p002", "p004"}, Exclude: []string{"p004"}, Venues: []string{"neurips"}}, "p002"},
		{papersearch.Filter{Tags: []string{"NeurIPS-2026"}}, "p004,p002"},
		{papersearch.Filter{Tags: []string{"my-library", "no-such-tag"}}, "p001,p002"},
		{papersearch.Filter{Tags: []string{"my-library"}, Venues: []string{"neurips"}}, "p002"},
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
	if ids(search.Matches{Candidates: all}) != "p003" {
		t.Errorf("Nearest with author and year filter = %v, want p003", all)
	}
	all, _ = s.Nearest(ctx, docs[0].Vector, 10, papersearch.Filter{Venues: []string{"NeurIPS", "ICLR"}})
	if len(all) != 2 {
		t.Errorf("Nearest with venues = %v, want 2 papers", all)
	}
	all, _ = s.Nearest(ctx, docs[0].Vector, 10, papersearch.Filter{Tags: []string{"neurips-2026"}})
	if len(all) != 2 {
		t.Errorf("Nearest with a tag = %v, want 2 papers", all)
	}
	all, _ = s.Nearest(ctx, docs[0].Vector, 10, papersearch.Filter{Only: []string{"p003", "p001", "p999"}})
	if got := ids(search.Matches{Candidates: all}); got != "p001,p003" && got != "p003,p001" {
		t.Errorf("Nearest with only p003, p001 and an unknown id = %v", all)
	}
	if d, err := s.Get(ctx, "p002"); err != nil || strings.Join(d.Paper.Tags, ",") != "my-library,neurips-2026" {
		t.Errorf("Get(p002) tags = %q (%v)", d.Paper.Tags, err)
	}
	if ps, err := s.Lookup(ctx, []string{"p004"}); err != nil || strings.Join(ps["p004"].Tags, ",") != "neurips-2026" {
		t.Errorf("Lookup(p004) tags = %q (%v)", ps["p004"].Tags, err)
	}
	if tags, err := s.Tags(ctx); err != nil || fmt.Sprint(tags) != "map[my-library:2 neurips-2026:2]" {
		t.Errorf("Tags = %v (%v), want my-library 2, neurips-2026 2", tags, err)
	}
	// Replacing a paper's text moves it in the lexical index.
	changed := mk(4, "Speech", "Nothing about that topic.", nil, "ICML", 2023)
	if err := s.Upsert(ctx, []search.Document{changed}); err != nil {
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
	// p004 replaced without its tag, p001 deleted: p002 holds both.
	if tags, err := s.Tags(ctx); err != nil || fmt.Sprint(tags) != "map[my-library:1 neurips-2026:1]" {
		t.Errorf("Tags after a replacement and a deletion = %v (%v), want my-library 1, neurips-2026 1", tags, err)
	}
}

// scroll is Run's Scroll case.
func scroll(t *testing.T, open func(t *testing.T) search.Store) {
	ctx := context.Background()
	s, _ := filled(t, open, 25)
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
			if len(d.Vector) != Model.Dim || d.Paper.Title == "" {
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
}

// fingerprints is Run's Fingerprints case.
func fingerprints(t *testing.T, open func(t *testing.T) search.Store) {
	ctx := context.Background()
	s := open(t)
	if err := s.Upsert(ctx, []search.Document{Doc(1), Doc(2)}); err != nil {
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
	if len(fps) != 2 || fps["p001"].PaperHash != Doc(1).PaperHash {
		t.Errorf("Fingerprints = %v", fps)
	}
}

// sentences is Run's Sentences case.
func sentences(t *testing.T, open func(t *testing.T) search.Store) {
	ctx := context.Background()
	s := open(t)
	if !s.KeepsSentences() {
		t.Fatal("a store created now says it keeps no sentence vectors")
	}
	d := Doc(1)
	d.Sentences = []search.Sentence{{Role: roles.Background, Vector: RandomUnit(11, Model.Dim)},
		{Role: roles.Method, Vector: RandomUnit(12, Model.Dim)}, {Role: roles.Result, Vector: RandomUnit(13, Model.Dim)}}
	if err := s.Upsert(ctx, []search.Document{d, Doc(2)}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Sentences(ctx, []string{"p001", "p002", "nope"})
	if err != nil {
		t.Fatal(err)
	}
	ss := got["p001"]
	if len(got) != 1 || len(ss) != 3 {
		t.Fatalf("Sentences = %+v, want p001's three", got)
	}
	for i, want := range d.Sentences {
		if ss[i].Role != want.Role || embed.Dot(ss[i].Vector, want.Vector) < 0.999 {
			t.Errorf("sentence %d: %v, cosine %.4f to the one stored", i, ss[i].Role, embed.Dot(ss[i].Vector, want.Vector))
		}
	}
	if doc, err := s.Get(ctx, "p001"); err != nil || len(doc.Sentences) != 3 {
		t.Errorf("Get: %d sentences, %v", len(doc.Sentences), err)
	}
	bad := d
	bad.Sentences = []search.Sentence{{Vector: make([]float32, 3)}}
	if err := s.Upsert(ctx, []search.Document{bad}); !errors.Is(err, search.ErrDimension) {
		t.Errorf("a sentence of the wrong dimension: %v", err)
	}
	if err := s.Delete(ctx, "p001"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Sentences(ctx, []string{"p001"}); len(got) != 0 {
		t.Errorf("after delete: %+v", got)
	}
}

// worksFindsVersions is Run's Works case.
func worksFindsVersions(t *testing.T, open func(t *testing.T) search.Store) {
	ctx := context.Background()
	s := open(t)
	d := Doc(1)
	d.Paper.Title, d.Paper.Authors = "Deep Networks Learn Slowly", []string{"Ada Lovelace", "Alan Turing"}
	d.Paper.Sources = []papersearch.Source{{ID: "arxiv:2401.00001", URL: "https://arxiv.org/abs/2401.00001"}, {ID: "doi:10.1/x"}}
	if err := s.Upsert(ctx, []search.Document{d, Doc(2), Doc(3)}); err != nil {
		t.Fatal(err)
	}
	works := func(keys ...string) []string {
		t.Helper()
		found, err := s.Works(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Sorted(maps.Keys(found))
	}
	for _, tt := range []struct {
		keys []string
		want []string
	}{
		{[]string{"doi:10.1/x"}, []string{"p001"}},
		{[]string{"arxiv:2401.00001", "nope"}, []string{"p001"}},
		{[]string{"title:deep networks learn slowly/lovelace"}, []string{"p001"}},
		{[]string{"p002", "p003", "doi:10.1/x"}, []string{"p001", "p002", "p003"}},
		{[]string{"title:deep networks learn slowly/turing", "arxiv:2401.00002"}, nil},
	} {
		if got := works(tt.keys...); !slices.Equal(got, tt.want) {
			t.Errorf("Works(%q) = %q, want %q", tt.keys, got, tt.want)
		}
	}
	got, err := s.Get(ctx, "p001")
	if err != nil || !slices.Equal(got.Paper.Sources, d.Paper.Sources) {
		t.Errorf("Get p001: sources %+v, %v; want %+v", got.Paper.Sources, err, d.Paper.Sources)
	}
	// A new version's keys replace the old ones; a deleted paper has none.
	d.Paper.Sources = d.Paper.Sources[:1]
	if err := s.Upsert(ctx, []search.Document{d}); err != nil {
		t.Fatal(err)
	}
	if got := works("doi:10.1/x"); got != nil {
		t.Errorf("after the DOI was dropped, Works(doi) = %q", got)
	}
	if err := s.Delete(ctx, "p001"); err != nil {
		t.Fatal(err)
	}
	if got := works("arxiv:2401.00001", "p001"); got != nil {
		t.Errorf("after delete, Works = %q", got)
	}
}

// filled opens a store and stores Doc(0) to Doc(n-1) in it.
func filled(t *testing.T, open func(t *testing.T) search.Store, n int) (search.Store, []search.Document) {
	t.Helper()
	s := open(t)
	docs := make([]search.Document, n)
	for i := range docs {
		docs[i] = Doc(i)
	}
	if err := s.Upsert(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	return s, docs
}
