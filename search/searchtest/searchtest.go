// Package searchtest builds what the tests of the search engine and of
// what serves it run against: an engine over a fresh embedded store in the
// test's temporary folder, closed when the test ends.
package searchtest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/sqlite"
)

// Store opens a fresh embedded store for vectors of model in t's
// temporary folder; it is closed when t ends.
func Store(t testing.TB, model embed.ModelInfo) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "papers.db"), model)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Engine returns an engine with embedder emb and options opts over a fresh
// embedded store (Store), and the store.
func Engine(t testing.TB, emb embed.Embedder, opts search.Options) (*search.Engine, *sqlite.Store) {
	t.Helper()
	s := Store(t, emb.Info())
	eng, err := search.NewEngine(s, emb, opts)
	if err != nil {
		t.Fatal(err)
	}
	return eng, s
}
