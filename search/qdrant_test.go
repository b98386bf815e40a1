package search

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/qdrant/go-client/qdrant"

	"github.com/papersearch/papersearch"
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

// TestQdrantRefreshWhileWriting re-weights the collection's BM25 vectors
// while other goroutines write papers of very different lengths, so the
// average length the weights depend on keeps moving. Under the race
// detector it fails if the average is read and written unsynchronised; and
// after the last refresh every paper is still found by its own word.
func TestQdrantRefreshWhileWriting(t *testing.T) {
	q := openTestQdrant(t, testModel)
	ctx := context.Background()
	doc := func(i int) Document {
		words := strings.Repeat("filler words pad this abstract ", 1+(i%4)*10)
		p := papersearch.Paper{ID: fmt.Sprintf("r%03d", i), Title: fmt.Sprintf("Paper %d", i),
			Abstract: fmt.Sprintf("Marker%d appears here. %s", i, words)}
		fp := FingerprintOf(p)
		return Document{Paper: p, Vector: randomUnit(uint64(i), testModel.Dim), TextHash: fp.TextHash, PaperHash: fp.PaperHash}
	}
	const writers, each = 3, 8
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := q.Upsert(ctx, []Document{doc(w*each + i)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for refreshing := true; refreshing; {
		select {
		case <-done:
			refreshing = false
		default:
		}
		if err := q.RefreshLexical(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Every point's BM25 weights are those of the average length the
	// collection records: none was written with a length the refresh
	// then failed to re-weight.
	ids := make([]*qdrant.PointId, writers*each)
	for i := range ids {
		ids[i] = pointID(doc(i).Paper.ID)
	}
	points, err := q.client.Get(ctx, &qdrant.GetPoints{CollectionName: q.coll, Ids: ids,
		WithVectors: qdrant.NewWithVectorsInclude(qdrantSparse), WithPayload: qdrant.NewWithPayloadInclude(fieldPaperID)})
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != writers*each {
		t.Fatalf("%d points, want %d", len(points), writers*each)
	}
	for _, p := range points {
		id := p.GetPayload()[fieldPaperID].GetStringValue()
		var i int
		fmt.Sscanf(id, "r%03d", &i)
		terms := Analyze(doc(i).Paper.Text())
		want := map[uint32]float32{}
		for term, tf := range termCounts(terms) {
			want[sparseTerm(term)] = float32(tfWeight(tf, len(terms), q.avgdl))
		}
		sv := p.GetVectors().GetVectors().GetVectors()[qdrantSparse]
		idx, val := sv.GetIndices().GetData(), sv.GetData()
		for k, ix := range idx {
			if w := want[ix]; math.Abs(float64(val[k]-w)) > 1e-5*float64(w) {
				t.Errorf("%s: a term weighs %g, want %g (average length %g)", id, val[k], w, q.avgdl)
				break
			}
		}
	}
}
