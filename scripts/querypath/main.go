//go:build ignore

// Command querypath serves one free-text search through the API over the
// shipped seeds (hash vectors: the path, not the model, is what is traced)
// between two calls of marker, so that a debugger can trace the
// functions the query calls: scripts/querypath.py drives it.
package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/papersearch/papersearch/api"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/sqlite"
	"github.com/papersearch/papersearch/seeds"
)

type hashEmb struct{}

func (hashEmb) Info() embed.ModelInfo { return embed.ModelInfo{Name: "hash-8", Dim: 8} }
func (hashEmb) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 8)
		for _, w := range strings.Fields(strings.ToLower(t)) {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%8] += 1
		}
		v[0] += 0.01
		embed.Normalize(v)
		out[i] = v
	}
	return out, nil
}

func main() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "qp")
	defer os.RemoveAll(dir)
	store, err := sqlite.Open(ctx, filepath.Join(dir, "p.db"), hashEmb{}.Info())
	if err != nil {
		panic(err)
	}
	defer store.Close()
	eng, err := search.NewEngine(store, hashEmb{}, search.Options{})
	if err != nil {
		panic(err)
	}
	papers, _ := seeds.NeurIPS2026()
	if _, err := catalog.New(eng, catalog.Options{}).Ingest(ctx, papers, nil); err != nil {
		panic(err)
	}
	h := api.New(eng, catalog.New(eng, catalog.Options{}), api.Options{})
	fire(h, "warm up")
	marker()
	fire(h, "language models that reason about graphs")
	marker()
}

//go:noinline
func marker() { fmt.Fprint(os.Stderr, "") }

func fire(h *api.Server, q string) {
	req := httptest.NewRequest("POST", "/v1/search", strings.NewReader(`{"query":"`+q+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Host = "127.0.0.1:8080"
	req.RemoteAddr = "127.0.0.1:5555"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	fmt.Fprintln(os.Stderr, rec.Code, len(rec.Body.String()))
}
