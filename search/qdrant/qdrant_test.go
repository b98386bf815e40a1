package qdrant

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
	"time"

	qc "github.com/qdrant/go-client/qdrant"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/storage"
	"github.com/papersearch/papersearch/search/storetest"
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
func openTestQdrant(t *testing.T, model embed.ModelInfo) *Store {
	t.Helper()
	return openTestQdrantConfig(t, model, Config{})
}

// openTestQdrantConfig is openTestQdrant with cfg's collection settings.
func openTestQdrantConfig(t *testing.T, model embed.ModelInfo, cfg Config) *Store {
	t.Helper()
	url := qdrantURL(t)
	suffix := make([]byte, 4)
	rand.Read(suffix)
	name := "test_" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()) + "_" + hex.EncodeToString(suffix)
	// Unquantised: the conformance suite checks dense answers are exact,
	// which only the float32 search promises (TestQdrantCollectionSettings
	// covers int8, the default).
	cfg.URL, cfg.Collection, cfg.Quantization = url, name, QuantizationNone
	q, err := Open(context.Background(), cfg, model)
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

// holdsFor3s waits until cond has held for 3 s, failing after a minute.
// A cluster applies a collection change after it answers, and a node was
// seen to show the change and then the old setting again: a test that
// sets a collection up waits for its setup to settle, so that what Open
// changes is not undone by the setup's own change arriving late.
func holdsFor3s(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline, held := time.Now().Add(time.Minute), 0; held < 60; time.Sleep(50 * time.Millisecond) {
		if cond() {
			held++
		} else {
			held = 0
		}
		if time.Now().After(deadline) {
			t.Fatalf("set up: %s did not hold for 3 s within a minute", what)
		}
	}
}

func TestQdrantConformance(t *testing.T) {
	qdrantURL(t)
	storetest.Run(t, func(t *testing.T) storage.Store { return openTestQdrant(t, storetest.Model) })
}

func TestQdrantRefusesOtherModel(t *testing.T) {
	q := openTestQdrant(t, storetest.Model)
	ctx := context.Background()
	if err := q.Upsert(ctx, []storage.Document{storetest.Doc(1)}); err != nil {
		t.Fatal(err)
	}
	// Reopening the same collection: same model works, another is refused.
	same, err := Open(ctx, Config{URL: qdrantURL(t), Collection: q.Collection()}, storetest.Model)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := same.Count(ctx); n != 1 {
		t.Errorf("reopened collection counts %d, want 1", n)
	}
	same.Close()
	for _, m := range []embed.ModelInfo{{Name: "other", Dim: 8}, {Name: storetest.Model.Name, Dim: 16}} {
		if _, err := Open(ctx, Config{URL: qdrantURL(t), Collection: q.Collection()}, m); !errors.Is(err, storage.ErrModelMismatch) {
			t.Errorf("open with %+v: err = %v, want ErrModelMismatch", m, err)
		}
	}
}

func TestQdrantBadURL(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:6334", "ftp://x", "http://:6334", "http://host:port"} {
		if _, err := Open(context.Background(), Config{URL: u}, storetest.Model); err == nil {
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
	q := openTestQdrant(t, storetest.Model)
	ctx := context.Background()
	doc := func(i int) storage.Document {
		words := strings.Repeat("filler words pad this abstract ", 1+(i%4)*10)
		p := papersearch.Paper{ID: fmt.Sprintf("r%03d", i), Title: fmt.Sprintf("Paper %d", i),
			Abstract: fmt.Sprintf("Marker%d appears here. %s", i, words)}
		fp := storage.FingerprintOf(p)
		return storage.Document{Paper: p, Vector: storetest.RandomUnit(uint64(i), storetest.Model.Dim), TextHash: fp.TextHash, PaperHash: fp.PaperHash}
	}
	const writers, each = 3, 8
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := q.Upsert(ctx, []storage.Document{doc(w*each + i)}); err != nil {
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
	ids := make([]*qc.PointId, writers*each)
	for i := range ids {
		ids[i] = pointID(doc(i).Paper.ID)
	}
	points, err := q.client.Get(ctx, &qc.GetPoints{CollectionName: q.coll, Ids: ids,
		WithVectors: qc.NewWithVectorsInclude(qdrantSparse), WithPayload: qc.NewWithPayloadInclude(fieldPaperID)})
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

// TestQdrantCollectionSettings: a new collection gets the HNSW, on-disk and
// int8 quantisation settings asked for, answers dense queries exactly on a
// small collection (rescored), and an unknown quantisation is refused.
func TestQdrantCollectionSettings(t *testing.T) {
	url := qdrantURL(t)
	ctx := context.Background()
	suffix := make([]byte, 4)
	rand.Read(suffix)
	cfg := Config{URL: url, Collection: "test_settings_" + hex.EncodeToString(suffix), HNSWM: 8, HNSWEFConstruct: 64,
		HNSWEF: 128, OnDiskVectors: true, OnDiskPayload: true, Quantization: QuantizationInt8}
	q, err := Open(ctx, cfg, storetest.Model)
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
		!c.GetParams().GetOnDiskPayload() || c.GetQuantizationConfig().GetScalar().GetType() != qc.QuantizationType_Int8 {
		t.Errorf("collection config %v", c)
	}
	var docs []storage.Document
	for i := range 40 {
		docs = append(docs, storetest.Doc(i))
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
	if _, err := Open(ctx, cfg, storetest.Model); err == nil || !strings.Contains(err.Error(), "int4") {
		t.Errorf("quantization int4: %v, want a refusal naming it", err)
	}
}

// TestUpsertUndoesAFailedWrite: an Upsert of more papers than one request
// holds whose third request fails leaves the collection as it was: the
// papers it replaced hold their old versions (vectors and BM25 included),
// the ones it added are gone.
func TestUpsertUndoesAFailedWrite(t *testing.T) {
	ctx := context.Background()
	q := openTestQdrant(t, storetest.Model)
	var before []storage.Document
	for i := range 20 {
		before = append(before, storetest.Doc(i))
	}
	if err := q.Upsert(ctx, before); err != nil {
		t.Fatal(err)
	}
	if err := q.RefreshLexical(ctx); err != nil {
		t.Fatal(err)
	}
	lexBefore, err := q.Lexical(ctx, lexical.Analyze("abstract number 7"), 5, papersearch.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []storage.Document
	for i := range 2*upsertSize + 50 {
		d := storetest.Doc(i)
		d.Paper.Title = "Changed"
		d.Paper.Abstract = fmt.Sprintf("Changed abstract %d of the failed write.", i)
		d.Vector = storetest.RandomUnit(uint64(i)+1000, storetest.Model.Dim)
		docs = append(docs, d)
	}
	q.beforeWrite = func(start int) error {
		if start >= 2*upsertSize {
			return errors.New("injected: the third request fails")
		}
		return nil
	}
	if err := q.Upsert(ctx, docs); err == nil || !strings.Contains(err.Error(), "nothing stored") {
		t.Fatalf("Upsert: %v, want a failure that stored nothing", err)
	}
	q.beforeWrite = nil
	if n, err := q.Count(ctx); err != nil || n != 20 {
		t.Errorf("Count = %d, %v; want the 20 stored before", n, err)
	}
	for _, want := range before {
		got, err := q.Get(ctx, want.Paper.ID)
		if err != nil || got.Paper.Title != want.Paper.Title || embed.Dot(got.Vector, want.Vector) < 0.9999 {
			t.Fatalf("%s after the failed write: %+v, %v", want.Paper.ID, got.Paper, err)
		}
	}
	if _, err := q.Get(ctx, docs[300].Paper.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a paper the failed write added is there: %v", err)
	}
	lexAfter, err := q.Lexical(ctx, lexical.Analyze("abstract number 7"), 5, papersearch.Filter{})
	if err != nil || fmt.Sprint(lexAfter) != fmt.Sprint(lexBefore) {
		t.Errorf("BM25 after the failed write: %v, %v; before %v", lexAfter, err, lexBefore)
	}
}

// TestOpenFoldsAccentsOfAnOlderCollection: a collection of schema version
// 4 holds BM25 vectors and author names analysed without folding accents,
// and, as before version 6, no dates; opening it analyses every point
// again, so "naive bayes" finds the paper written "naïve" and the author
// filter "scholkopf" finds Schölkopf, dates every point by its year and
// counts it as added then, makes its work keys again as version 7 folds
// them (a version spelled "Jorgensen" is recognised as the paper by
// "Jørgensen"), and records the current version.
func TestOpenFoldsAccentsOfAnOlderCollection(t *testing.T) {
	ctx := context.Background()
	q := openTestQdrant(t, storetest.Model)
	d := storetest.Doc(1)
	d.Paper.Title, d.Paper.Abstract, d.Paper.Authors = "Naïve Bayes revisited", "A naïve Bayes classifier for spam.", []string{"Bernhard Schölkopf"}
	d.Paper.Year = 2019
	other := storetest.Doc(2)
	other.Paper.Abstract = "Bayes nets for spam filtering with naive priors."
	other.Paper.Title, other.Paper.Authors = "Spectral Methods for Straße Networks", []string{"Søren Jørgensen"}
	if err := q.Upsert(ctx, []storage.Document{d, other}); err != nil {
		t.Fatal(err)
	}
	// Before version 7 a work key kept ø and ß.
	if _, err := q.client.SetPayload(ctx, &qc.SetPayloadPoints{CollectionName: q.coll, Wait: qc.PtrOf(true),
		Payload:        qc.NewValueMap(map[string]any{fieldWorkKeys: []any{"p002", "title:spectral methods for straße networks/jørgensen"}}),
		PointsSelector: qc.NewPointsSelector(pointID("p002"))}); err != nil {
		t.Fatal(err)
	}
	// Back to version 4: the point as the analyser before folding made it.
	old := []string{"naïv", "bay", "revisit", "naïv", "bay", "classifi", "spam"}
	if _, err := q.client.UpdateVectors(ctx, &qc.UpdatePointVectors{CollectionName: q.coll, Wait: qc.PtrOf(true),
		Points: []*qc.PointVectors{{Id: pointID("p001"), Vectors: qc.NewVectorsMap(map[string]*qc.Vector{qdrantSparse: q.sparseBM25(old)})}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.client.SetPayload(ctx, &qc.SetPayloadPoints{CollectionName: q.coll, Wait: qc.PtrOf(true),
		Payload: qc.NewValueMap(map[string]any{fieldAuthorNames: []any{"bernhard schölkopf"}}), PointsSelector: qc.NewPointsSelector(pointID("p001"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.client.DeletePayload(ctx, &qc.DeletePayloadPoints{CollectionName: q.coll, Wait: qc.PtrOf(true),
		Keys: []string{fieldAdded, fieldDayFirst, fieldDayLast, fieldDate}, PointsSelector: qc.NewPointsSelectorFilter(&qc.Filter{})}); err != nil {
		t.Fatal(err)
	}
	if err := q.client.UpdateCollection(ctx, &qc.UpdateCollection{CollectionName: q.coll,
		Metadata: qc.NewValueMap(map[string]any{metaSchema: int64(4)})}); err != nil {
		t.Fatal(err)
	}
	opened := time.Now().UTC().Truncate(time.Second)
	holdsFor3s(t, "schema version 4", func() bool {
		info, err := q.client.GetCollectionInfo(ctx, q.coll)
		return err == nil && info.GetConfig().GetMetadata()[metaSchema].GetIntegerValue() == 4
	})
	again, err := Open(ctx, Config{URL: qdrantURL(t), Collection: q.coll, Quantization: QuantizationNone}, storetest.Model)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	plain, err := again.Lexical(ctx, lexical.Analyze("naive bayes"), 5, papersearch.Filter{})
	if err != nil || len(plain.Candidates) == 0 || plain.Candidates[0].ID != "p001" {
		t.Errorf("naive bayes after the refold: %v, %v", plain.Candidates, err)
	}
	for _, author := range []string{"scholkopf", "Schölkopf"} {
		got, err := again.Nearest(ctx, d.Vector, 5, papersearch.Filter{Author: author})
		if err != nil || len(got) != 1 || got[0].ID != "p001" {
			t.Errorf("author %q after the refold: %v, %v", author, got, err)
		}
	}
	if got, err := again.Nearest(ctx, d.Vector, 5, papersearch.Filter{Since: "2019-06-01", Until: "2019-06-30"}); err != nil || len(got) != 1 || got[0].ID != "p001" {
		t.Errorf("within its year after the upgrade: %v, %v", got, err)
	}
	if got, err := again.Get(ctx, "p002"); err != nil || got.Paper.Added.Before(opened) || time.Since(got.Paper.Added) > time.Minute {
		t.Errorf("added after the upgrade: %v, %v; want about %v", got.Paper.Added, err, opened)
	}
	ascii := papersearch.TitleKey(papersearch.Paper{Title: "Spectral methods for Strasse networks", Authors: []string{"Jorgensen, Soren"}})
	if works, err := again.Works(ctx, []string{ascii}); err != nil || len(works) != 1 || works["p002"].ID != "p002" {
		t.Errorf("after the upgrade, %s finds %v, %v; want p002", ascii, works, err)
	}
	// As a reader would, wait for the version the refold records to reach
	// the node answering.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		info, err := again.client.GetCollectionInfo(ctx, q.coll)
		if err == nil && info.GetConfig().GetMetadata()[metaSchema].GetIntegerValue() == schemaVersion {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the refold: schema version %v, %v", info.GetConfig().GetMetadata()[metaSchema], err)
		}
	}
}
