package search

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/testenv"
)

// qdrantURL returns the Qdrant the integration tests use, from
// PAPERSEARCH_TEST_QDRANT_URL (deploy/qdrant-local.sh up prints it; .ci/run
// sets it). Without it the Qdrant tests skip, saying so; with it set, an
// unreachable Qdrant fails them.
func qdrantURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("PAPERSEARCH_TEST_QDRANT_URL")
	if u == "" {
		testenv.Missing(t, "PAPERSEARCH_TEST_QDRANT_URL is not set: start one with deploy/qdrant-local.sh up and export the URL it prints")
	}
	return u
}

// openTestQdrant opens a store in a collection of its own, dropped at the
// end of the test.
func openTestQdrant(t *testing.T, model embed.ModelInfo) *Qdrant {
	t.Helper()
	url := qdrantURL(t)
	suffix := make([]byte, 4)
	rand.Read(suffix)
	name := "test_" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()) + "_" + hex.EncodeToString(suffix)
	q, err := OpenQdrant(context.Background(), QdrantConfig{URL: url, Collection: name}, model)
	if err != nil {
		t.Fatalf("open qdrant at %s: %v", url, err)
	}
	t.Cleanup(func() {
		if err := q.Drop(context.Background()); err != nil {
			t.Errorf("drop collection %s: %v", name, err)
		}
		q.Close()
	})
	return q
}

func TestQdrantConformance(t *testing.T) {
	qdrantURL(t)
	storeConformance(t, func(t *testing.T) Store { return openTestQdrant(t, testModel) })
}

func TestQdrantRefusesOtherModel(t *testing.T) {
	q := openTestQdrant(t, testModel)
	ctx := context.Background()
	if err := q.Upsert(ctx, []Document{testDoc(1)}); err != nil {
		t.Fatal(err)
	}
	// Reopening the same collection: same model works, another is refused.
	same, err := OpenQdrant(ctx, QdrantConfig{URL: qdrantURL(t), Collection: q.Collection()}, testModel)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := same.Count(ctx); n != 1 {
		t.Errorf("reopened collection counts %d, want 1", n)
	}
	same.Close()
	for _, m := range []embed.ModelInfo{{Name: "other", Dim: 8}, {Name: testModel.Name, Dim: 16}} {
		if _, err := OpenQdrant(ctx, QdrantConfig{URL: qdrantURL(t), Collection: q.Collection()}, m); !errors.Is(err, ErrModelMismatch) {
			t.Errorf("open with %+v: err = %v, want ErrModelMismatch", m, err)
		}
	}
}

func TestQdrantBadURL(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:6334", "ftp://x", "http://:6334", "http://host:port"} {
		if _, err := OpenQdrant(context.Background(), QdrantConfig{URL: u}, testModel); err == nil {
			t.Errorf("URL %q accepted", u)
		}
	}
}
