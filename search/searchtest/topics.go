package searchtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
)

// Topics is an embedder that gives a text that opens "topic N:" a unit
// vector near the Nth axis of 16 (a little of the next axis, by the rest
// of the text), so that tests know which papers are near which.
type Topics struct{}

func (Topics) Info() embed.ModelInfo { return embed.ModelInfo{Name: "topics-16", Dim: 16} }

func (Topics) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		var topic, n int
		fmt.Sscanf(t[strings.Index(t, "topic"):], "topic %d: paper %d", &topic, &n)
		v := make([]float32, 16)
		v[topic%16] = 1
		v[(topic+1)%16] = float32(n%7) * 0.05
		v[(topic+5)%16] = float32(n%3) * 0.03
		embed.Normalize(v)
		out[i] = v
	}
	return out, nil
}

// TopicPaper is paper n of topic t, holding tags.
func TopicPaper(t, n int, tags ...string) papersearch.Paper {
	return papersearch.Paper{ID: fmt.Sprintf("t%d-%d", t, n), Title: fmt.Sprintf("topic %d: paper %d", t, n),
		Abstract: fmt.Sprintf("topic %d: paper %d is about its topic.", t, n), Year: 2020 + n%3, Tags: tags}
}

// TopicEngine is an engine (Topics) over a fresh embedded store holding
// papers of topics 0 to 5, 12 each (TopicPaper); the collection "lib"
// holds papers 0-3 of topics 1 and 4.
func TopicEngine(t testing.TB) *search.Engine {
	t.Helper()
	eng, _ := Engine(t, Topics{}, search.Options{})
	var papers []papersearch.Paper
	for topic := range 6 {
		for n := range 12 {
			var tags []string
			if (topic == 1 || topic == 4) && n < 4 {
				tags = []string{"lib"}
			}
			papers = append(papers, TopicPaper(topic, n, tags...))
		}
	}
	if _, err := catalog.New(eng, catalog.Options{}).Ingest(context.Background(), papers, nil); err != nil {
		t.Fatal(err)
	}
	return eng
}
