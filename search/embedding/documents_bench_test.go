package embedding_test

import (
	"context"
	"testing"

	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search/embedding"
	"github.com/papersearch/papersearch/search/storage"
)

// BenchmarkSentenceCost measures what sentence vectors cost with the
// in-process model, in ms per paper over 100 real ML papers embedded in
// the catalog's batches: their texts embedded alone (papers without
// sentence vectors), then Documents with sentence vectors pooled from
// each paper's encoder pass (contextual, the default) and with each
// sentence embedded on its own (separate).
//
//	go test -run '^$' -bench SentenceCost -benchtime 1x ./search/embedding/
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
			for i := 0; i < len(texts); i += catalog.IngestBatch {
				if _, err := docs.Embed(context.Background(), texts[i:min(i+catalog.IngestBatch, len(texts))]); err != nil {
					b.Fatal(err)
				}
			}
		}
		perPaper(b)
	})
	for _, separate := range []bool{false, true} {
		b.Run(map[bool]string{false: "contextual", true: "separate"}[separate], func(b *testing.B) {
			models, err := embedding.New(local, embedding.Options{SeparateSentences: separate})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				for i := 0; i < len(papers); i += catalog.IngestBatch {
					batch := papers[i:min(i+catalog.IngestBatch, len(papers))]
					docs := make([]*storage.Document, len(batch))
					for j, p := range batch {
						docs[j] = &storage.Document{Paper: p}
					}
					if err := models.Documents(context.Background(), docs); err != nil {
						b.Fatal(err)
					}
				}
			}
			perPaper(b)
		})
	}
}
