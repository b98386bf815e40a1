//go:build ignore

// Command querypath serves one free-text search through the API over the
// shipped seeds (hash vectors: the path, not the model, is what is traced)
// between two calls of marker, so that a debugger can trace the
// functions the query calls: scripts/querypath.py drives it. With the
// argument "import" it serves instead one import of a BibTeX file
// (POST /v1/imports, waited for to its end).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/papersearch/papersearch/api"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/catalog/imports"
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
	h := api.New(eng, catalog.New(eng, catalog.Options{}), api.Options{OpenWrites: true, Importer: imports.Config{}.Open})
	if len(os.Args) > 1 && os.Args[1] == "import" {
		importOnce(h, "warm")
		marker()
		importOnce(h, "traced")
		marker()
		return
	}
	fire(h, "warm up")
	marker()
	fire(h, "language models that reason about graphs")
	marker()
}

// importOnce imports two BibTeX entries named for key through h and
// waits for the import to end.
func importOnce(h *api.Server, key string) {
	lib := fmt.Sprintf("@article{%s1, title = {Graph networks %s}, author = {Lovelace, Ada}, year = {2025}, abstract = {Message passing over graphs.}}\n"+
		"@article{%s2, title = {Sparse attention %s}, author = {Hopper, Grace}, year = {2026}, abstract = {Attention that skips most pairs.}}\n", key, key, key, key)
	body, _ := json.Marshal(map[string]any{"source": "bibtex", "content": lib})
	rec := do(h, "POST", "/v1/imports", string(body))
	var job struct{ ID, Status string }
	json.Unmarshal(rec.Body.Bytes(), &job)
	for job.Status != "done" && job.Status != "failed" {
		time.Sleep(10 * time.Millisecond)
		json.Unmarshal(do(h, "GET", "/v1/imports/"+job.ID, "").Body.Bytes(), &job)
	}
	fmt.Fprintln(os.Stderr, "import", job.ID, job.Status)
}

// do serves one request through h as from a loopback client.
func do(h *api.Server, method, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Host = "127.0.0.1:8080"
	req.RemoteAddr = "127.0.0.1:5555"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

//go:noinline
func marker() { fmt.Fprint(os.Stderr, "") }

// fire asks h one free-text search for q.
func fire(h *api.Server, q string) {
	body, _ := json.Marshal(map[string]string{"query": q})
	rec := do(h, "POST", "/v1/search", string(body))
	fmt.Fprintln(os.Stderr, rec.Code, len(rec.Body.String()))
}
