package storetest

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/storage"
)

// lexicalAndFilters is Run's LexicalAndFilters case.
func lexicalAndFilters(t *testing.T, open func(t *testing.T) storage.Store) {
	ctx := context.Background()
	s := open(t)
	docs := []storage.Document{
		filterDoc(1, "Graph neural networks", "Message passing over molecular graphs predicts properties of graphs.", []string{"Geoffrey Hinton"}, "ICML", 2019),
		filterDoc(2, "Speech recognition", "Transformers transcribe speech; a graph of phonemes helps.", []string{"Yann LeCun"}, "NeurIPS", 2021),
		filterDoc(3, "Protein folding", "Residue contact maps fold proteins.", []string{"Ada Lovelace", "Geoff Smith"}, "ICLR", 2023),
		filterDoc(4, "Graph graph graph", "Graphs, graphs and more graph theory for graph people.", []string{"Alan Turing"}, "ICML", 2023),
	}
	docs[0].Paper.Tags = []string{"my-library"}
	docs[1].Paper.Tags = []string{"my-library", "neurips-2026"}
	docs[3].Paper.Tags = []string{"neurips-2026"}
	if err := s.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	checkIdeal(t, s, "4 papers, 3 with graph", math.Log(10.0/7)+math.Log(10))
	lexicalRanking(t, s)
	lexicalFilters(t, s)
	denseFilters(t, s, docs[0].Vector)
	tagsRead(t, s, "my-library:2 neurips-2026:2")
	lexicalFollowsWrites(t, s)
}

// filterDoc is paper i of the lexical and filter cases, with its
// fingerprints.
func filterDoc(i int, title, abstract string, authors []string, venue string, year int) storage.Document {
	d := Doc(i)
	d.Paper = papersearch.Paper{ID: fmt.Sprintf("p%03d", i), Title: title, Abstract: abstract, Authors: authors, Venue: venue, Year: year}
	fp := storage.FingerprintOf(d.Paper)
	d.TextHash, d.PaperHash = fp.TextHash, fp.PaperHash
	return d
}

// matchIDs joins the ids of m's candidates with commas, in order.
func matchIDs(m storage.Matches) string {
	var out []string
	for _, c := range m.Candidates {
		out = append(out, c.ID)
	}
	return strings.Join(out, ",")
}

// checkIdeal checks the ideal score of "graph zebra": each term's idf,
// zebra's as a term no paper holds; it follows every write.
func checkIdeal(t *testing.T, s storage.Store, when string, want float64) {
	t.Helper()
	m, err := s.Lexical(context.Background(), lexical.Analyze("graph zebra"), 10, papersearch.Filter{})
	if err != nil || !near(m.Ideal, want) {
		t.Errorf("%s: ideal of graph zebra = %v (%v), want %v", when, m.Ideal, err, want)
	}
}

// lexicalRanking: BM25 ranks the papers holding a term by its frequency,
// scores positive and descending; a term no paper holds finds nothing.
func lexicalRanking(t *testing.T, s storage.Store) {
	ctx := context.Background()
	m, err := s.Lexical(ctx, lexical.Analyze("graphs"), 10, papersearch.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	got := m.Candidates
	if matchIDs(m) != "p004,p001,p002" {
		t.Errorf("Lexical(graphs) = %s (%v), want p004,p001,p002", matchIDs(m), got)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Score > got[i-1].Score || got[i].Score <= 0 {
			t.Errorf("lexical scores not positive and descending: %v", got)
		}
	}
	if got, _ := s.Lexical(ctx, lexical.Analyze("zebra"), 10, papersearch.Filter{}); len(got.Candidates) != 0 || !near(got.Ideal, math.Log(10)) {
		t.Errorf("Lexical(zebra) = %+v, want nothing, ideal ln 10", got)
	}
}

// lexicalFilters: every filter, alone and combined, narrows lexical
// retrieval.
func lexicalFilters(t *testing.T, s storage.Store) {
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
		got, err := s.Lexical(context.Background(), lexical.Analyze("graph"), 10, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		if matchIDs(got) != tt.want {
			t.Errorf("Lexical(graph, %+v) = %s, want %s", tt.f, matchIDs(got), tt.want)
		}
	}
}

// denseFilters: the same filters apply to dense retrieval (v is the first
// paper's vector).
func denseFilters(t *testing.T, s storage.Store, v []float32) {
	ctx := context.Background()
	all, _ := s.Nearest(ctx, v, 10, papersearch.Filter{Author: "geoff", YearMin: 2020})
	if matchIDs(storage.Matches{Candidates: all}) != "p003" {
		t.Errorf("Nearest with author and year filter = %v, want p003", all)
	}
	all, _ = s.Nearest(ctx, v, 10, papersearch.Filter{Venues: []string{"NeurIPS", "ICLR"}})
	if len(all) != 2 {
		t.Errorf("Nearest with venues = %v, want 2 papers", all)
	}
	all, _ = s.Nearest(ctx, v, 10, papersearch.Filter{Tags: []string{"neurips-2026"}})
	if len(all) != 2 {
		t.Errorf("Nearest with a tag = %v, want 2 papers", all)
	}
	all, _ = s.Nearest(ctx, v, 10, papersearch.Filter{Only: []string{"p003", "p001", "p999"}})
	if got := matchIDs(storage.Matches{Candidates: all}); got != "p001,p003" && got != "p003,p001" {
		t.Errorf("Nearest with only p003, p001 and an unknown id = %v", all)
	}
}

// tagsRead: Get and Lookup return the papers' tags, and Tags counts them
// (want as "tag:count" separated by spaces).
func tagsRead(t *testing.T, s storage.Store, want string) {
	ctx := context.Background()
	if d, err := s.Get(ctx, "p002"); err != nil || strings.Join(d.Paper.Tags, ",") != "my-library,neurips-2026" {
		t.Errorf("Get(p002) tags = %q (%v)", d.Paper.Tags, err)
	}
	if ps, err := s.Lookup(ctx, []string{"p004"}); err != nil || strings.Join(ps["p004"].Tags, ",") != "neurips-2026" {
		t.Errorf("Lookup(p004) tags = %q (%v)", ps["p004"].Tags, err)
	}
	if tags, err := s.Tags(ctx); err != nil || fmt.Sprint(tags) != "map["+want+"]" {
		t.Errorf("Tags = %v (%v), want %s", tags, err, want)
	}
}

// lexicalFollowsWrites: replacing a paper's text moves it in the lexical
// index, deleting one takes it out, and the ideal scores and tag counts
// follow.
func lexicalFollowsWrites(t *testing.T, s storage.Store) {
	ctx := context.Background()
	changed := filterDoc(4, "Speech", "Nothing about that topic.", nil, "ICML", 2023)
	if err := s.Upsert(ctx, []storage.Document{changed}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Lexical(ctx, lexical.Analyze("graph"), 10, papersearch.Filter{}); matchIDs(got) != "p001,p002" {
		t.Errorf("after replacing p004: %s", matchIDs(got))
	}
	checkIdeal(t, s, "p004 replaced, 2 with graph", math.Ln2+math.Log(10))
	if err := s.Delete(ctx, "p001"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Lexical(ctx, lexical.Analyze("graph"), 10, papersearch.Filter{}); matchIDs(got) != "p002" {
		t.Errorf("after deleting p001: %s", matchIDs(got))
	}
	checkIdeal(t, s, "p001 deleted, 3 papers, 1 with graph", math.Log(8.0/3)+math.Log(8))
	// p004 replaced without its tag, p001 deleted: p002 holds both.
	if tags, err := s.Tags(ctx); err != nil || fmt.Sprint(tags) != "map[my-library:1 neurips-2026:1]" {
		t.Errorf("Tags after a replacement and a deletion = %v (%v), want my-library 1, neurips-2026 1", tags, err)
	}
}
