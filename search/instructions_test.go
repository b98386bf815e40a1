package search_test

import (
	"context"
	"slices"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/searchtest"
)

// TestModelInstructions: the engine embeds queries and papers with the
// model's instructions, whatever organisation prefixes its name, and
// queries as typed under RawQueries.
func TestModelInstructions(t *testing.T) {
	const bgeQuery = "Represent this sentence for searching relevant passages: "
	paper := papersearch.Paper{ID: "p1", Title: "Graphs", Abstract: "Message passing over graphs."}
	// ingestAndAsk stores the paper and asks "graph networks" through an
	// engine over emb.
	ingestAndAsk := func(emb embed.Embedder, opts search.Options) {
		t.Helper()
		ctx := context.Background()
		eng, _ := searchtest.Engine(t, emb, opts)
		if _, err := catalog.New(eng, catalog.Options{}).Ingest(ctx, []papersearch.Paper{paper}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := eng.Search(ctx, search.Query{Text: "graph networks"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		model      string
		raw        bool
		query, doc string
	}{
		{"bge-small-en-v1.5", false, bgeQuery, ""},
		{"BAAI/bge-small-en-v1.5", false, bgeQuery, ""},
		{"bge-small-en-v1.5", true, "", ""},
		{"e5-small-v2", false, "query: ", "passage: "},
		{"e5-small-v2", true, "", "passage: "},
		{"all-MiniLM-L6-v2", false, "", ""},
	} {
		rec := &searchtest.Recorder{Name: tt.model}
		ingestAndAsk(rec, search.Options{RawQueries: tt.raw})
		// The paper, its abstract's one sentence, then the query.
		want := []string{tt.doc + paper.Text(), tt.doc + paper.Abstract, tt.query + "graph networks"}
		if !slices.Equal(rec.Texts(), want) {
			t.Errorf("%s (raw queries %v) embedded %q, want %q", tt.model, tt.raw, rec.Texts(), want)
		}
	}
	// A pair: each model with its own instructions.
	bge, e5 := &searchtest.Recorder{Name: "bge-small-en-v1.5"}, &searchtest.Recorder{Name: "e5-small-v2"}
	ingestAndAsk(embed.NewPair(bge, e5), search.Options{})
	if want := []string{paper.Text(), paper.Abstract, bgeQuery + "graph networks"}; !slices.Equal(bge.Texts(), want) {
		t.Errorf("pair: bge embedded %q, want %q", bge.Texts(), want)
	}
	if want := []string{"passage: " + paper.Text(), "passage: " + paper.Abstract, "query: graph networks"}; !slices.Equal(e5.Texts(), want) {
		t.Errorf("pair: e5 embedded %q, want %q", e5.Texts(), want)
	}
}
