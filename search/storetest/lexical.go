package storetest

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/lexical"
)

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
