package catalog_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/searchtest"
	"github.com/papersearch/papersearch/search/sqlite"
)

func ingestOnce(b *testing.B, emb embed.Embedder, batch int, papers []papersearch.Paper) time.Duration {
	b.Helper()
	eng, _ := searchtest.Engine(b, emb, search.Options{})
	start := time.Now()
	sum, err := catalog.New(eng, catalog.Options{Batch: batch}).Ingest(context.Background(), papers, nil)
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
//	go test -run '^$' -bench Ingest300 -benchtime 1x ./catalog/
func BenchmarkIngest300(b *testing.B) {
	papers := testenv.MLPapers(b, 300)
	local, err := embed.NewLocal(embed.LocalOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("in-process", func(b *testing.B) {
		var d time.Duration
		for b.Loop() {
			d += ingestOnce(b, local, catalog.IngestBatch, papers)
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
		srv := httptest.NewServer(api.New(eng, catalog.New(eng, catalog.Options{}), api.Options{}))
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
