package search_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/sqlite"
)

// benchStore is an embedded store of the 29,100 ML papers with hash vectors.
func benchStore(b *testing.B) (*sqlite.Store, []string) {
	b.Helper()
	papers := testenv.MLPapers(b, 29100)
	model := embed.ModelInfo{Name: "all-MiniLM-L6-v2", Dim: 384}
	s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "p.db"), model)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	ids := make([]string, len(papers))
	for i := 0; i < len(papers); i += 1000 {
		var docs []search.Document
		for _, p := range papers[i:min(i+1000, len(papers))] {
			docs = append(docs, search.Document{Paper: p, Vector: hashvec.Of(p.ID, 384)})
		}
		if err := s.Upsert(context.Background(), docs); err != nil {
			b.Fatal(err)
		}
	}
	for i, p := range papers {
		ids[i] = p.ID
	}
	return s, ids
}

// BenchmarkStore29k measures the hot loops of a similar-paper query on the
// 29,100 ML papers: the dense scan (int8 first pass, exact re-scoring), BM25
// with a paper's text as the query, and the whole engine call.
func BenchmarkStore29k(b *testing.B) {
	s, ids := benchStore(b)
	ctx := context.Background()
	doc, _ := s.Get(ctx, ids[100])
	b.Run("nearest", func(b *testing.B) {
		for b.Loop() {
			s.Nearest(ctx, doc.Vector, 100, papersearch.Filter{})
		}
	})
	terms := lexical.Analyze(doc.Paper.Text())
	b.Run("lexical-paper", func(b *testing.B) {
		for b.Loop() {
			s.Lexical(ctx, terms, 100, papersearch.Filter{})
		}
	})
	b.Run("lexical-question", func(b *testing.B) {
		q := lexical.Analyze("graph neural networks for molecular property prediction")
		for b.Loop() {
			s.Lexical(ctx, q, 100, papersearch.Filter{})
		}
	})
	eng, _ := search.NewEngine(s, failing{}, search.Options{})
	b.Run("similar", func(b *testing.B) {
		i := 0
		for b.Loop() {
			eng.Similar(ctx, search.SimilarQuery{ID: ids[i%len(ids)], Limit: 10})
			i++
		}
	})
}

type failing struct{}

func (failing) Embed(context.Context, []string) ([][]float32, error) { return nil, context.Canceled }
func (failing) Info() embed.ModelInfo                                { return embed.ModelInfo{Name: "all-MiniLM-L6-v2", Dim: 384} }
