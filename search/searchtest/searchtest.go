// Package searchtest builds what the tests of the search engine and of
// what serves it run against: an engine over a fresh embedded store in the
// test's temporary folder, closed when the test ends.
package searchtest

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/sqlite"
	"github.com/papersearch/papersearch/search/storetest"
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

// Recorder is an embedder that keeps every text it is asked to embed and
// answers with hash vectors (hashvec) of storetest.Model's dimension,
// under the model name Name: what tests that check what was embedded use.
type Recorder struct {
	Name  string
	mu    sync.Mutex
	texts []string
}

func (r *Recorder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		r.texts = append(r.texts, t)
		out[i] = hashvec.Of(t, storetest.Model.Dim)
	}
	return out, nil
}

func (r *Recorder) Info() embed.ModelInfo {
	return embed.ModelInfo{Name: r.Name, Dim: storetest.Model.Dim}
}

// Texts returns the texts embedded so far, in order.
func (r *Recorder) Texts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.texts)
}
