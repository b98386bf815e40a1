package search_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/searchtest"
	"github.com/papersearch/papersearch/search/sqlite"
)

func ingestOnce(b *testing.B, emb embed.Embedder, batch int, papers []papersearch.Paper) time.Duration {
	b.Helper()
	eng, _ := searchtest.Engine(b, emb, search.Options{IngestBatch: batch})
	start := time.Now()
	sum, err := eng.Ingest(context.Background(), papers, nil)
	if err != nil {
		b.Fatal(err)
	}
	if sum.Embedded != len(papers) {
		b.Fatalf("embedded %d of %d", sum.Embedded, len(papers))
	}
	return time.Since(start)
}

// BenchmarkIngest300 ingests 300 real ML papers with the in-process model
// and through the OpenAI-compatible client talking to papersearch's own
// /v1/embeddings (the same model behind HTTP), reporting papers/s.
//
//	go test -run '^$' -bench Ingest300 -benchtime 1x ./search/
func BenchmarkIngest300(b *testing.B) {
	papers := testenv.MLPapers(b, 300)
	local, err := embed.NewLocal(embed.LocalOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("in-process", func(b *testing.B) {
		var d time.Duration
		for b.Loop() {
			d += ingestOnce(b, local, search.IngestBatch, papers)
		}
		b.ReportMetric(float64(len(papers)*b.N)/d.Seconds(), "papers/s")
	})
	b.Run("http", func(b *testing.B) {
		store, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "srv.db"), local.Info())
		if err != nil {
			b.Fatal(err)
		}
		defer store.Close()
		eng, _ := search.NewEngine(store, local, search.Options{})
		srv := httptest.NewServer(api.New(eng, api.Options{}))
		defer srv.Close()
		const batch, concurrency = 16, 2
		client, err := embed.NewOpenAI(context.Background(), embed.OpenAIConfig{BaseURL: srv.URL + "/v1",
			Model: local.Info().Name, Dimensions: local.Info().Dim, BatchSize: batch, Concurrency: concurrency})
		if err != nil {
			b.Fatal(err)
		}
		var d time.Duration
		for b.Loop() {
			d += ingestOnce(b, client, batch*concurrency, papers)
		}
		b.ReportMetric(float64(len(papers)*b.N)/d.Seconds(), "papers/s")
	})
}

// BenchmarkSentenceCost measures what sentence vectors cost at ingest with
// the in-process model, in ms per paper over 100 real ML papers: their
// texts embedded alone (ingest without sentence vectors), then ingest into
// a new SQLite store with sentence vectors pooled from each paper's
// encoder pass (contextual, the default) and with each sentence embedded
// on its own (separate).
//
//	go test -run '^$' -bench SentenceCost -benchtime 1x ./search/
func BenchmarkSentenceCost(b *testing.B) {
	papers := testenv.MLPapers(b, 100)
	local, err := embed.NewLocal(embed.LocalOptions{})
	if err != nil {
		b.Fatal(err)
	}
	perPaper := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*len(papers)), "ms/paper")
	}
	b.Run("texts", func(b *testing.B) {
		docs := embed.Instructed(local, embed.Document)
		texts := make([]string, len(papers))
		for i, p := range papers {
			texts[i] = p.Text()
		}
		for b.Loop() {
			for i := 0; i < len(texts); i += search.IngestBatch {
				if _, err := docs.Embed(context.Background(), texts[i:min(i+search.IngestBatch, len(texts))]); err != nil {
					b.Fatal(err)
				}
			}
		}
		perPaper(b)
	})
	for _, separate := range []bool{false, true} {
		b.Run(map[bool]string{false: "contextual", true: "separate"}[separate], func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				e, store := searchtest.Engine(b, local, search.WithResearch(search.Options{}, search.ResearchOptions{SeparateSentences: separate}))
				b.StartTimer()
				if _, err := e.Ingest(context.Background(), papers, nil); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				store.Close()
				b.StartTimer()
			}
			perPaper(b)
		})
	}
}
