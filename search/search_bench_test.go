package search_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/searchtest"
	"github.com/papersearch/papersearch/search/sqlite"
	"github.com/papersearch/papersearch/search/storage"
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
		var docs []storage.Document
		for _, p := range papers[i:min(i+1000, len(papers))] {
			docs = append(docs, storage.Document{Paper: p, Vector: hashvec.Of(p.ID, 384)})
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

// BenchmarkExplain compares a plain and an explained hybrid search over
// 2,000 ML papers ingested with hash vectors (sentence vectors included),
// the query embedded by the hash stand-in: what explaining costs the
// engine beyond the query's own embedding.
func BenchmarkExplain(b *testing.B) {
	papers := testenv.MLPapers(b, 2000)
	ctx := context.Background()
	emb := hashvec.Embedder{Model: embed.ModelInfo{Name: "hash", Dim: 384}}
	eng, _ := searchtest.Engine(b, emb, search.Options{})
	if _, err := catalog.New(eng, catalog.Options{}).Ingest(ctx, papers, nil); err != nil {
		b.Fatal(err)
	}
	for _, explain := range []bool{false, true} {
		name := "plain"
		if explain {
			name = "explained"
		}
		b.Run(name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				if _, err := eng.Search(ctx, search.Query{Text: papers[i%len(papers)].Title, Limit: 10, Explain: explain}); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkRecommend29k measures a collection's recommendations (the
// default method, the first page of 10 with each hit's nearest members)
// over the 29,100 ML papers in the embedded store, hash vectors of the
// default three models' width, for a 50-paper collection: a paper and its
// 49 nearest.
func BenchmarkRecommend29k(b *testing.B) {
	ctx := context.Background()
	papers := testenv.MLPapers(b, 29100)
	model := embed.ModelInfo{Name: embed.DefaultLocalModel, Dim: 3 * 384}
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "p.db"), model)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	for i := 0; i < len(papers); i += 1000 {
		var docs []storage.Document
		for _, p := range papers[i:min(i+1000, len(papers))] {
			docs = append(docs, storage.Document{Paper: p, Vector: hashvec.Of(p.ID, model.Dim)})
		}
		if err := s.Upsert(ctx, docs); err != nil {
			b.Fatal(err)
		}
	}
	eng, err := search.NewEngine(s, hashvec.Embedder{Model: model}, search.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, method := range search.RecommendMethods() {
		tag := "bench-" + string(method)
		seed := papers[1000*(1+len(tag)%7)].ID
		near, err := eng.Similar(ctx, search.SimilarQuery{ID: seed, Limit: 49})
		if err != nil {
			b.Fatal(err)
		}
		ids := []string{seed}
		for _, h := range near.Hits {
			ids = append(ids, h.ID)
		}
		if _, err := catalog.New(eng, catalog.Options{}).Retag(ctx, ids, []string{tag}, nil); err != nil {
			b.Fatal(err)
		}
		b.Run(string(method), func(b *testing.B) {
			for b.Loop() {
				res, err := eng.Recommend(ctx, search.RecommendQuery{Tag: tag, Limit: 10, Method: method})
				if err != nil || len(res.Hits) != 10 {
					b.Fatalf("%d hits, %v", len(res.Hits), err)
				}
			}
		})
	}
}

// BenchmarkLastPage29k measures the page that ends a hybrid question's
// paging (the one past 900) over the 29,100 ML papers with hash vectors:
// the last of pages of 37 (after 999 results) and of 99 (after 990), each
// ranking the 1,000 best of both retrievals, beside the first page of 100.
func BenchmarkLastPage29k(b *testing.B) {
	s, _ := benchStore(b)
	ctx := context.Background()
	eng, err := search.NewEngine(s, hashvec.Embedder{Model: s.Model()}, search.Options{})
	if err != nil {
		b.Fatal(err)
	}
	q := search.Query{Text: "attention mechanisms in transformers", Limit: 100}
	b.Run("first of 100", func(b *testing.B) {
		for b.Loop() {
			if _, err := eng.Search(ctx, q); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, size := range []int{37, 99} {
		last := search.Query{Text: q.Text, Limit: size}
		for {
			res, err := eng.Search(ctx, last)
			if err != nil {
				b.Fatal(err)
			}
			if res.NextCursor == "" {
				break
			}
			last.Cursor = res.NextCursor
		}
		b.Run(fmt.Sprintf("last of %d", size), func(b *testing.B) {
			for b.Loop() {
				if _, err := eng.Search(ctx, last); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
