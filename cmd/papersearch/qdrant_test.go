package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search/qdrant"
)

// TestQdrantAnswersLikeEmbedded serves the seed corpus from the embedded
// store and from Qdrant: the same questions get the same top results.
func TestQdrantAnswersLikeEmbedded(t *testing.T) {
	qurl := os.Getenv("PAPERSEARCH_TEST_QDRANT_URL")
	if qurl == "" {
		testenv.Missing(t, "PAPERSEARCH_TEST_QDRANT_URL is not set: start one with deploy/qdrant-local.sh up and export the URL it prints")
	}
	setEnv(t)
	embedded, _, stop1 := startServe(t)
	defer stop1()

	suffix := make([]byte, 4)
	rand.Read(suffix)
	coll := "seed_test_" + hex.EncodeToString(suffix)
	t.Setenv("PAPERSEARCH_QDRANT_URL", qurl)
	t.Setenv("PAPERSEARCH_COLLECTION", coll)
	// One shard, as on a single Qdrant node: Qdrant computes BM25's IDF per
	// shard, so only a one-shard collection has the embedded store's exact
	// statistics on a corpus this small.
	t.Setenv("PAPERSEARCH_QDRANT_SHARDS", "1")
	onQdrant, logs, stop2 := startServe(t)
	defer func() {
		stop2()
		q, err := qdrant.Open(context.Background(), qdrant.Config{URL: qurl, Collection: coll},
			embed.ModelInfo{Name: embed.DefaultLocalModel, Dim: 1152})
		if err == nil {
			q.Drop(context.Background())
			q.Close()
		}
	}()
	if !strings.Contains(logs.String(), "store=qdrant") || !strings.Contains(logs.String(), "seed corpus ingested") {
		t.Fatalf("second instance is not seeding Qdrant:\n%s", logs)
	}
	for _, q := range []string{
		"why does asking the teacher for feedback during training help an agent copy its behaviour?",
		"do brain signal foundation models rediscover the classic hand-designed features?",
		"grouping devices in decentralized training by per-category similarity of their local data",
		"why do people overweight small chances and underweight large ones?",
		"why do people think unlikely events are more likely than they are?",
		"are browsing bots respecting websites' legal rules about automated data collection?",
		"3D reconstruction from several cameras mounted on a self-driving car",
		"an LLM assistant that debugs chip hardware designs by inspecting signal traces",
	} {
		a, b := topIDs(t, embedded, q, 3), topIDs(t, onQdrant, q, 3)
		if len(a) != 3 || strings.Join(a, ",") != strings.Join(b, ",") {
			t.Errorf("%q: embedded %v, qdrant %v", q, a, b)
		}
	}
}
