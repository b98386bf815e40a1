package search

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search/lexical"
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
	// Unquantised: the conformance suite checks dense answers are exact,
	// which only the float32 search promises (TestQdrantCollectionSettings
	// covers int8, the default).
	q, err := OpenQdrant(context.Background(), QdrantConfig{URL: url, Collection: name, Quantization: QuantizationNone}, model)
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
		terms := lexical.Analyze(doc(i).Paper.Text())
		want := map[uint32]float32{}
		for term, tf := range lexical.TermCounts(terms) {
			want[sparseTerm(term)] = float32(lexical.TFWeight(tf, len(terms), q.avgdl))
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

// TestQdrantLexicalRanksLikeEmbedded pins the lexical side on a six-shard
// collection to the embedded store's: the same 600 real abstracts in both,
// and for 40 queries (titles of other papers, and one long abstract, which
// is pruned to its most informative terms) the same papers in the same
// order with the same BM25 scores. Qdrant's own IDF, computed per shard,
// made ranks depend on how points fell across shards.
func TestQdrantLexicalRanksLikeEmbedded(t *testing.T) {
	url := qdrantURL(t)
	ctx := context.Background()
	papers := readMLPapers(t)
	corpus, queries := papers[:600], papers[600:640]
	suffix := make([]byte, 4)
	rand.Read(suffix)
	name := "test_six_shards_" + hex.EncodeToString(suffix)
	q, err := OpenQdrant(ctx, QdrantConfig{URL: url, Collection: name, Shards: 6}, hashModel)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { q.Drop(context.Background()); q.Close() }()
	e, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "papers.db"), hashModel)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	docs := make([]Document, len(corpus))
	for i, p := range corpus {
		fp := FingerprintOf(p)
		docs[i] = Document{Paper: p, Vector: hashVector(p.ID), TextHash: fp.TextHash, PaperHash: fp.PaperHash}
	}
	for _, s := range []Store{q, e} {
		for i := 0; i < len(docs); i += 100 {
			if err := s.Upsert(ctx, docs[i:i+100]); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.RefreshLexical(ctx); err != nil {
			t.Fatal(err)
		}
	}
	texts := []string{corpus[7].Text()}
	for _, p := range queries {
		texts = append(texts, p.Title)
	}
	for _, text := range texts {
		terms := lexical.Analyze(text)
		want, err := e.Lexical(ctx, terms, 10, papersearch.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := q.Lexical(ctx, terms, 10, papersearch.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.Ideal-want.Ideal) > 1e-6*want.Ideal || len(got.Candidates) != len(want.Candidates) {
			t.Fatalf("%.40q: ideal %g with %d candidates, embedded %g with %d", text, got.Ideal, len(got.Candidates),
				want.Ideal, len(want.Candidates))
		}
		for i, w := range want.Candidates {
			g := got.Candidates[i]
			// Scores agree to float32 rounding; a tie may order either way.
			if math.Abs(float64(g.Score-w.Score)) > 1e-4*float64(w.Score) {
				t.Errorf("%.40q rank %d: %s %.5f, embedded %s %.5f", text, i+1, g.ID, g.Score, w.ID, w.Score)
				break
			}
			if g.ID != w.ID && (i+1 == len(want.Candidates) || want.Candidates[i+1].Score < w.Score-1e-4*w.Score) &&
				(i == 0 || want.Candidates[i-1].Score > w.Score+1e-4*w.Score) {
				t.Errorf("%.40q rank %d: %s, embedded %s (scores %.5f, %.5f)", text, i+1, g.ID, w.ID, g.Score, w.Score)
			}
		}
	}
}

// TestQdrantTurnsOffItsIDF: a collection from before papersearch weighed
// query terms itself (Qdrant's IDF modifier on) has it turned off when
// opened, so idf is not applied twice.
func TestQdrantTurnsOffItsIDF(t *testing.T) {
	q := openTestQdrant(t, testModel)
	ctx := context.Background()
	err := q.client.UpdateCollection(ctx, &qdrant.UpdateCollection{CollectionName: q.Collection(),
		SparseVectorsConfig: qdrant.NewSparseVectorsConfig(map[string]*qdrant.SparseVectorParams{
			qdrantSparse: {Modifier: qdrant.Modifier_Idf.Enum()},
		})})
	if err != nil {
		t.Fatal(err)
	}
	modifier := func() qdrant.Modifier {
		info, err := q.client.GetCollectionInfo(ctx, q.Collection())
		if err != nil {
			t.Fatal(err)
		}
		return sparseParams(info).GetModifier()
	}
	// A cluster applies the change after it answers.
	for deadline := time.Now().Add(30 * time.Second); modifier() != qdrant.Modifier_Idf; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("set up: modifier %v, want Idf", modifier())
		}
	}
	again, err := OpenQdrant(ctx, QdrantConfig{URL: qdrantURL(t), Collection: q.Collection()}, testModel)
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	// On a cluster under load the collection's config was seen to show the
	// old modifier again for a while after the change was visible: wait
	// for it to settle, as a reader would.
	for deadline := time.Now().Add(30 * time.Second); modifier() != qdrant.Modifier_None; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("30 s after opening: modifier %v, want None", modifier())
		}
	}
}

// TestQdrantCollectionSettings: a new collection gets the HNSW, on-disk and
// int8 quantisation settings asked for, answers dense queries exactly on a
// small collection (rescored), and an unknown quantisation is refused.
func TestQdrantCollectionSettings(t *testing.T) {
	url := qdrantURL(t)
	ctx := context.Background()
	suffix := make([]byte, 4)
	rand.Read(suffix)
	cfg := QdrantConfig{URL: url, Collection: "test_settings_" + hex.EncodeToString(suffix), HNSWM: 8, HNSWEFConstruct: 64,
		HNSWEF: 128, OnDiskVectors: true, OnDiskPayload: true, Quantization: QuantizationInt8}
	q, err := OpenQdrant(ctx, cfg, testModel)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { q.Drop(context.Background()); q.Close() }()
	info, err := q.client.GetCollectionInfo(ctx, q.Collection())
	if err != nil {
		t.Fatal(err)
	}
	c := info.GetConfig()
	dense := c.GetParams().GetVectorsConfig().GetParamsMap().GetMap()[qdrantDense]
	if c.GetHnswConfig().GetM() != 8 || c.GetHnswConfig().GetEfConstruct() != 64 || !dense.GetOnDisk() ||
		!c.GetParams().GetOnDiskPayload() || c.GetQuantizationConfig().GetScalar().GetType() != qdrant.QuantizationType_Int8 {
		t.Errorf("collection config %v", c)
	}
	var docs []Document
	for i := range 40 {
		docs = append(docs, testDoc(i))
	}
	if err := q.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	got, err := q.Nearest(ctx, docs[9].Vector, 3, papersearch.Filter{})
	if err != nil || len(got) != 3 || got[0].ID != "p009" || got[0].Score < 0.9999 {
		t.Errorf("Nearest under int8 quantisation = %v, %v; want p009 first with its exact score 1", got, err)
	}
	cfg.Collection += "_bad"
	cfg.Quantization = "int4"
	if _, err := OpenQdrant(ctx, cfg, testModel); err == nil || !strings.Contains(err.Error(), "int4") {
		t.Errorf("quantization int4: %v, want a refusal naming it", err)
	}
}

// TestQdrantSeesOtherWritersTerms: a store opened before another process
// wrote to its collection weighs query terms with the other's documents
// once an exact count shows the collection changed.
func TestQdrantSeesOtherWritersTerms(t *testing.T) {
	a := openTestQdrant(t, testModel)
	ctx := context.Background()
	b, err := OpenQdrant(ctx, QdrantConfig{URL: qdrantURL(t), Collection: a.Collection()}, testModel)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	d := testDoc(1)
	d.Paper.Abstract = "Gradient clipping stabilises recurrent networks."
	if err := a.Upsert(ctx, []Document{d, testDoc(2), testDoc(3)}); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Count(ctx); err != nil || n != 3 {
		t.Fatalf("b counts %d (%v), want 3", n, err)
	}
	m, err := b.Lexical(ctx, lexical.Analyze("gradient clipping"), 5, papersearch.Filter{})
	if err != nil || len(m.Candidates) != 1 || m.Candidates[0].ID != "p001" {
		t.Errorf("b's lexical after a's writes: %+v, %v; want p001", m.Candidates, err)
	}
	want, _ := a.Lexical(ctx, lexical.Analyze("gradient clipping"), 5, papersearch.Filter{})
	if math.Abs(m.Ideal-want.Ideal) > 1e-9 || len(want.Candidates) != 1 ||
		math.Abs(float64(m.Candidates[0].Score-want.Candidates[0].Score)) > 1e-5 {
		t.Errorf("b weighs %+v (ideal %g), a %+v (ideal %g)", m.Candidates, m.Ideal, want.Candidates, want.Ideal)
	}
}
