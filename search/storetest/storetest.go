// Package storetest is the behaviour every storage.Store shares, as one
// suite that each store's tests run against a fresh store of their own.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/storage"
)

// Model is the model of the suite's vectors: 8 dimensions, so a store's
// tests stay small.
var Model = embed.ModelInfo{Name: "test-model", Dim: 8}

// RandomUnit returns a deterministic pseudo-random unit vector.
func RandomUnit(seed uint64, dim int) []float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	embed.Normalize(v)
	return v
}

// Doc returns the i-th test document: paper "p%03d" of year 2000+i%20 in
// venue TestConf, with a random unit vector.
func Doc(i int) storage.Document {
	p := papersearch.Paper{ID: fmt.Sprintf("p%03d", i), Title: fmt.Sprintf("Paper %d", i),
		Abstract: fmt.Sprintf("Abstract number %d.", i), Authors: []string{"A. Author"}, Venue: "TestConf", Year: 2000 + i%20}
	fp := storage.FingerprintOf(p)
	return storage.Document{Paper: p, Vector: RandomUnit(uint64(i), Model.Dim), TextHash: fp.TextHash, PaperHash: fp.PaperHash}
}

// Run runs the behaviour every store must share, each case against a
// fresh, empty store from open.
func Run(t *testing.T, open func(t *testing.T) storage.Store) {
	t.Run("PagesAreOneRanking", func(t *testing.T) { pagesAreOneRanking(t, open(t)) })
	t.Run("PutIsAllOrNothing", func(t *testing.T) { putIsAllOrNothing(t, open(t)) })
	t.Run("FoldsAccents", func(t *testing.T) { foldsAccents(t, open(t)) })
	t.Run("UpsertGetCount", func(t *testing.T) { upsertGetCount(t, open) })
	t.Run("KeepsEveryField", func(t *testing.T) { keepsEveryField(t, open) })
	t.Run("NotFound", func(t *testing.T) { notFound(t, open) })
	t.Run("WrongDimension", func(t *testing.T) { wrongDimension(t, open) })
	t.Run("NearestIsExactAndExcludes", func(t *testing.T) { nearestIsExactAndExcludes(t, open) })
	t.Run("Delete", func(t *testing.T) { deleteRemoves(t, open) })
	t.Run("LexicalAndFilters", func(t *testing.T) { lexicalAndFilters(t, open) })
	t.Run("Scroll", func(t *testing.T) { scroll(t, open) })
	t.Run("Fingerprints", func(t *testing.T) { fingerprints(t, open) })
	t.Run("Sentences", func(t *testing.T) { sentences(t, open) })
	t.Run("Works", func(t *testing.T) { worksFindsVersions(t, open) })
	t.Run("KeepsAddedTimes", func(t *testing.T) { keepsAddedTimes(t, open) })
	t.Run("DateFilters", func(t *testing.T) { dateFilters(t, open) })
	t.Run("Records", func(t *testing.T) { keepsRecords(t, open(t)) })
}

// keepsRecords: a store keeps the service's records by kind and id:
// replaced whole, listed by kind, removed, an absent one ErrNotFound, and
// none of them a paper.
func keepsRecords(t *testing.T, s storage.Store) {
	r, ok := s.(storage.Records)
	if !ok {
		t.Fatalf("%T keeps no records", s)
	}
	ctx := context.Background()
	for _, rec := range []struct{ kind, id, doc string }{
		{"alert", "a1", `{"query":"x"}`}, {"alert", "a2", `{"query":"y"}`}, {"service", "a1", `"key"`}, {"alert", "a1", `{"query":"z"}`},
	} {
		if err := r.PutRecord(ctx, rec.kind, rec.id, []byte(rec.doc)); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := r.GetRecord(ctx, "alert", "a1"); err != nil || string(got) != `{"query":"z"}` {
		t.Errorf("GetRecord alert a1: %s %v", got, err)
	}
	if got, err := r.GetRecord(ctx, "service", "a1"); err != nil || string(got) != `"key"` {
		t.Errorf("GetRecord service a1: %s %v", got, err)
	}
	all, err := r.ListRecords(ctx, "alert")
	if err != nil || len(all) != 2 || string(all["a2"]) != `{"query":"y"}` {
		t.Errorf("ListRecords alert: %q %v", all, err)
	}
	if err := r.DeleteRecord(ctx, "alert", "a2"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.GetRecord(ctx, "alert", "a2"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a deleted record: %v", err)
	}
	if err := r.DeleteRecord(ctx, "alert", "a2"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("deleting an absent record: %v", err)
	}
	if n, err := s.Count(ctx); err != nil || n != 0 {
		t.Errorf("records counted as papers: %d %v", n, err)
	}
}

// filled opens a store and stores Doc(0) to Doc(n-1) in it.
func filled(t *testing.T, open func(t *testing.T) storage.Store, n int) (storage.Store, []storage.Document) {
	t.Helper()
	s := open(t)
	docs := make([]storage.Document, n)
	for i := range docs {
		docs[i] = Doc(i)
	}
	if err := s.Upsert(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	return s, docs
}
