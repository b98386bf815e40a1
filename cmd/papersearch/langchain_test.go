package main

import (
	"crypto/sha1"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkoukk/tiktoken-go-loader/assets"

	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/testenv"
)

// TestLangchainOpenAIDefaults: langchain-openai's OpenAIEmbeddings with
// its defaults (it counts tokens with tiktoken and sends token arrays)
// against a live server embeds documents and queries as the same texts
// sent as strings through the official openai client: the route decodes
// the token arrays (it used to answer 400); the client's models.list and
// models.retrieve find the model (GET /v1/models was 404).
func TestLangchainOpenAIDefaults(t *testing.T) {
	if exec.Command("python3", "-c", "import langchain_openai, openai").Run() != nil {
		testenv.Missing(t, "python3 with langchain-openai is not installed (scripts/test installs it: pip install 'langchain-openai==1.*')")
	}
	setEnv(t)
	t.Setenv("PAPERSEARCH_SEED", "false") // embeddings need no papers
	base, _, stop := startServe(t)
	defer stop()
	// tiktoken reads its vocabulary from its cache, named by the SHA-1 of
	// its URL; with no network here, the cache gets the module's copy
	// (the same file: SHA-256 223921b7…).
	cache := t.TempDir()
	vocab, err := assets.Assets.ReadFile("cl100k_base.tiktoken")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum([]byte("https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"))
	if err := os.WriteFile(filepath.Join(cache, hex.EncodeToString(sum[:])), vocab, 0o644); err != nil {
		t.Fatal(err)
	}
	script := `
import math, sys
from langchain_openai import OpenAIEmbeddings
from openai import OpenAI
base, model = sys.argv[1], sys.argv[2]
texts = ["Graph neural networks predict molecular properties.", "Naïve Bayes for spam filtering — revisited, with 100% recall?"]
lc = OpenAIEmbeddings(base_url=base, api_key="unused", model=model)
docs, query = lc.embed_documents(texts), lc.embed_query(texts[0])
client = OpenAI(base_url=base, api_key="unused")
listed = [m.id for m in client.models.list()]
assert model in listed and client.models.retrieve(model).id == model, listed
plain = [d.embedding for d in client.embeddings.create(model=model, input=texts).data]
cos = lambda a, b: sum(x * y for x, y in zip(a, b)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))
print(min(cos(a, b) for a, b in zip(docs + [query], plain + [plain[0]])), len(docs[0]))
`
	for _, model := range []string{"bge-small-en-v1.5", embed.DefaultLocalModel} {
		cmd := exec.Command("python3", "-c", script, base+"/v1", model)
		cmd.Env = append(os.Environ(), "TIKTOKEN_CACHE_DIR="+cache)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", model, err, out)
		}
		fields := strings.Fields(strings.TrimSpace(string(out)))
		if len(fields) < 2 || !strings.HasPrefix(fields[len(fields)-2], "0.9999") && !strings.HasPrefix(fields[len(fields)-2], "1.0") {
			t.Errorf("%s: langchain's vectors against the strings' (min cosine, dim): %s", model, out)
		}
	}
}
