package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/papersearch/papersearch/embed"
)

// hashEndpoint is an OpenAI-compatible endpoint of another model: a
// deterministic 16-dimensional embedding of each text's words.
func hashEndpoint(t *testing.T) string { return slowHashEndpoint(t, 0) }

// slowHashEndpoint is hashEndpoint taking delay to answer each request, as a
// remote model would.
func slowHashEndpoint(t *testing.T, delay time.Duration) string {
	return hashServer(t, delay, func([]string) {})
}

// askedHashEndpoint is hashEndpoint keeping the texts it is asked to
// embed: asked returns those since its last call.
func askedHashEndpoint(t *testing.T) (url string, asked func() []string) {
	var mu sync.Mutex
	var texts []string
	url = hashServer(t, 0, func(in []string) {
		mu.Lock()
		defer mu.Unlock()
		texts = append(texts, in...)
	})
	return url, func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := texts
		texts = nil
		return out
	}
}

func hashServer(t *testing.T, delay time.Duration, asked func([]string)) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		var req struct {
			Input []string `json:"input"`
			Model string   `json:"model"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		asked(req.Input)
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i, text := range req.Input {
			v := make([]float32, 64)
			for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) }) {
				h := fnv.New32a()
				h.Write([]byte(w))
				v[h.Sum32()%64]++
			}
			data = append(data, item{"embedding", i, v})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
			"usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func TestModelChangeRefusedThenReindexed(t *testing.T) {
	dir := setEnv(t)
	t.Setenv("PAPERSEARCH_LOG_LEVEL", "warn")
	ctx := context.Background()
	ingestThreePapers(t)

	t.Setenv("PAPERSEARCH_EMBED_URL", hashEndpoint(t))
	t.Setenv("PAPERSEARCH_EMBED_MODEL", "hash-64")
	err := run(ctx, []string{"search", "proteins"}, io.Discard, io.Discard)
	for _, want := range []string{embed.DefaultLocalModel + " (1152 dimensions)", "hash-64 (64 dimensions)", "papersearch reindex"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("search under another model: err = %v, want it to mention %q", err, want)
		}
	}

	// The store's state besides its papers: an alert and a watch.
	db, err := sql.Open("sqlite", filepath.Join(dir, "papersearch.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO records (kind, id, doc) VALUES ('alert', 'a1', '{"id":"a1"}')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := run(ctx, []string{"watch", "add", "arxiv", "cat:cs.LG"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if err := run(ctx, []string{"reindex"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "reindexed 3 papers under hash-64") {
		t.Errorf("reindex output: %s", out.String())
	}
	// The new store kept them.
	db, err = sql.Open("sqlite", filepath.Join(dir, "papersearch.db"))
	if err != nil {
		t.Fatal(err)
	}
	var records, watches int
	db.QueryRowContext(ctx, `SELECT COUNT(*) FROM records WHERE kind = 'alert'`).Scan(&records)
	db.QueryRowContext(ctx, `SELECT COUNT(*) FROM watches`).Scan(&watches)
	db.Close()
	if records != 1 || watches != 1 {
		t.Errorf("after reindex the store keeps %d alerts and %d watches, want 1 and 1", records, watches)
	}
	if _, err := os.Stat(filepath.Join(dir, "papersearch.db."+strings.ReplaceAll(embed.DefaultLocalModel, "+", "_")+".bak")); err != nil {
		t.Errorf("old index not kept: %v", err)
	}
	out.Reset()
	if err := run(ctx, []string{"search", "protein folding sequences", "--limit", "1"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), " c ") {
		t.Errorf("search after reindex:\n%q", out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"reindex"}, &out, io.Discard); err != nil || !strings.Contains(out.String(), "nothing to do") {
		t.Errorf("second reindex: %v %s", err, out.String())
	}

	// A store of schema 5 drops its sentence vectors when opened; reindex
	// under the same model embeds its papers again, in place, for theirs.
	db, err = sql.Open("sqlite", filepath.Join(dir, "papersearch.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`ALTER TABLE papers DROP COLUMN type`, `UPDATE meta SET value = '5' WHERE key = 'schema_version'`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	out.Reset()
	if err := run(ctx, []string{"reindex"}, &out, io.Discard); err != nil || !strings.Contains(out.String(), "embedded 3 papers again for their sentence vectors") {
		t.Errorf("reindex of a schema 5 store: %v %s", err, out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"similar", "c", "--aspect", "background", "--limit", "1"}, &out, io.Discard); err != nil {
		t.Errorf("similar by background after filling the sentence vectors: %v", err)
	}
	out.Reset()
	if err := run(ctx, []string{"reindex"}, &out, io.Discard); err != nil || !strings.Contains(out.String(), "nothing to do") {
		t.Errorf("reindex again: %v %s", err, out.String())
	}
}

// TestLocalModelChangeRefusedThenReindexed is the upgrade from a store
// built with all-MiniLM-L6-v2 (the first default): under
// the new default it refuses to open, naming both models and the migration
// command, and reindex migrates it.
func TestLocalModelChangeRefusedThenReindexed(t *testing.T) {
	setEnv(t)
	t.Setenv("PAPERSEARCH_LOG_LEVEL", "warn")
	t.Setenv("PAPERSEARCH_SEED", "false")
	ctx := context.Background()
	t.Setenv("PAPERSEARCH_MODEL", "all-MiniLM-L6-v2")
	ingestThreePapers(t)
	os.Unsetenv("PAPERSEARCH_MODEL") // restored by t.Setenv's cleanup
	err := run(ctx, []string{"search", "proteins"}, io.Discard, io.Discard)
	for _, want := range []string{"all-MiniLM-L6-v2 (384 dimensions)", embed.DefaultLocalModel + " (1152 dimensions)", "papersearch reindex"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("search under another local model: err = %v, want it to mention %q", err, want)
		}
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"reindex"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "reindexed 3 papers under "+embed.DefaultLocalModel) {
		t.Errorf("reindex output: %s", out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"search", "how do proteins fold?", "--limit", "1"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), " c ") {
		t.Errorf("search after reindex:\n%q", out.String())
	}
	t.Setenv("PAPERSEARCH_MODEL", "no-such-model")
	if err := run(ctx, []string{"search", "proteins"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "bge-small-en-v1.5") {
		t.Errorf("an unknown model: %v, want the list of local models", err)
	}
}

// ingestThreePapers stores three papers on distinct topics (a, b, c) with
// the configured model.
// threePapers is the corpus ingestThreePapers ingests.
const threePapers = `{"id":"a","abstract":"Graph neural networks predict molecular properties."}
{"id":"b","abstract":"Speech recognition transcribes audio with transformers."}
{"id":"c","abstract":"Protein folding from amino acid sequences."}
`

func ingestThreePapers(t *testing.T) {
	t.Helper()
	corpus := filepath.Join(t.TempDir(), "papers.jsonl")
	os.WriteFile(corpus, []byte(threePapers), 0o644)
	if err := run(context.Background(), []string{"ingest", corpus}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
}

// TestIngestReusesTheEmbeddingCache: a corpus ingested once costs no
// embedding when ingested again into a fresh store (another data folder,
// a rebuilt index): its vectors, sentence vectors too, come from the
// embedding cache that eval also reads; with PAPERSEARCH_EMBED_CACHE=off
// its texts are embedded again.
func TestIngestReusesTheEmbeddingCache(t *testing.T) {
	setEnv(t)
	t.Setenv("PAPERSEARCH_LOG_LEVEL", "warn")
	url, asked := askedHashEndpoint(t)
	t.Setenv("PAPERSEARCH_EMBED_URL", url)
	t.Setenv("PAPERSEARCH_EMBED_MODEL", "hash-64")
	ctx := context.Background()
	// corpusTexts counts the texts asked that hold words of the corpus
	// (the endpoint is also asked a probe of its own at each start).
	corpusTexts := func() int {
		n := 0
		for _, text := range asked() {
			if strings.Contains(text, "molecular") || strings.Contains(text, "audio") || strings.Contains(text, "amino") {
				n++
			}
		}
		return n
	}
	ingestThreePapers(t)
	if n := corpusTexts(); n < 3 {
		t.Fatalf("the first ingest embedded %d of the corpus's texts", n)
	}
	fresh := t.TempDir()
	t.Setenv("PAPERSEARCH_DATA_DIR", fresh)
	corpus := filepath.Join(t.TempDir(), "papers.jsonl")
	os.WriteFile(corpus, []byte(threePapers), 0o644)
	var says bytes.Buffer
	if err := run(ctx, []string{"ingest", corpus}, io.Discard, &says); err != nil {
		t.Fatal(err)
	}
	if n := corpusTexts(); n != 0 {
		t.Errorf("ingesting the same corpus into a fresh store embedded %d of its texts again, want 0", n)
	}
	if !strings.Contains(says.String(), "embedding cache") || !strings.Contains(says.String(), " found, 0 encoded") {
		t.Errorf("ingest does not say the cache held every vector:\n%s", says.String())
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"search", "--json", "protein folding"}, &out, io.Discard); err != nil || !strings.Contains(out.String(), `"id": "c"`) {
		t.Errorf("search of the store made from the cache: %v\n%s", err, out.String())
	}
	// The sentence vectors came from the cache too.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(fresh, "papersearch.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var withSentences int
	db.QueryRow(`SELECT COUNT(*) FROM sentences`).Scan(&withSentences)
	db.Close()
	if withSentences != 3 {
		t.Errorf("%d papers of the store made from the cache have sentence vectors, want 3", withSentences)
	}
	t.Setenv("PAPERSEARCH_DATA_DIR", t.TempDir())
	t.Setenv("PAPERSEARCH_EMBED_CACHE", "off")
	ingestThreePapers(t)
	if n := corpusTexts(); n < 3 {
		t.Errorf("with the cache off, ingest embedded %d of the corpus's texts", n)
	}
}
