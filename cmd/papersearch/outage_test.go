package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/papersearch/papersearch/internal/testenv"
)

// qdrantNode runs deploy/qdrant-local.sh for a Qdrant node of the test's
// own, on ports apart from the shared test cluster's.
type qdrantNode struct {
	t     *testing.T
	env   []string
	state string
}

// outagePortBase puts the test's own node on REST 7333 and gRPC 7334.
const outagePortBase = "7333"

func startQdrantNode(t *testing.T) *qdrantNode {
	t.Helper()
	if os.Getenv("PAPERSEARCH_TEST_QDRANT_URL") == "" {
		testenv.Missing(t, "PAPERSEARCH_TEST_QDRANT_URL is not set, so Qdrant may not be installed: scripts/test installs it")
	}
	n := &qdrantNode{t: t, state: filepath.Join(t.TempDir(), "qdrant")}
	n.env = append(os.Environ(), "QDRANT_STATE="+n.state, "QDRANT_PORT_BASE="+outagePortBase)
	n.run("up")
	t.Cleanup(func() { n.run("down") })
	return n
}

func (n *qdrantNode) run(args ...string) {
	n.t.Helper()
	cmd := exec.Command("../../deploy/qdrant-local.sh", args...)
	cmd.Env = n.env
	if out, err := cmd.CombinedOutput(); err != nil {
		n.t.Fatalf("qdrant-local.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestQdrantOutage kills the Qdrant node under a running papersearch:
// while it is down every request that needs it answers 503 problem+json
// with Retry-After (never 500, never an internal address), readiness says
// not ready; once it is back and /readyz answers 200, the very first write
// succeeds and nothing acknowledged before the outage is lost.
func TestQdrantOutage(t *testing.T) {
	node := startQdrantNode(t)
	env := crashEnv(t, t.TempDir(), hashEndpoint(t), "PAPERSEARCH_QDRANT_URL=http://127.0.0.1:7334",
		"PAPERSEARCH_COLLECTION=outage", "PAPERSEARCH_QUERY_EMBED_TIMEOUT=2s")
	cmd, base, logs := startBinary(t, env)
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()

	send := func(method, path, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	paper := func(id string) string {
		return `{"papers":[{"id":"` + id + `","title":"Outage paper ` + id + `","abstract":"A paper about surviving a vector store outage, number ` + id + `."}]}`
	}
	if resp, body := send("POST", "/v1/papers", paper("before")); resp.StatusCode != 200 {
		t.Fatalf("write before the outage: %d %s", resp.StatusCode, body)
	}

	// Readiness answers from no cache: ready just before, not ready the
	// moment Qdrant is gone (a cached count said ready for 1.7 s).
	if resp, body := send("GET", "/readyz", ""); resp.StatusCode != 200 {
		t.Fatalf("readyz before the outage: %d %s", resp.StatusCode, body)
	}
	node.run("kill", "0")
	if resp, body := send("GET", "/readyz", ""); resp.StatusCode != 503 {
		t.Errorf("readyz right after Qdrant died: %d %s", resp.StatusCode, body)
	}
	requests := []struct{ method, path, body string }{
		{"POST", "/v1/search", `{"query":"vector store outage"}`},
		{"POST", "/v1/search", `{"query":"vector store outage","mode":"lexical"}`},
		{"GET", "/v1/papers/before", ""},
		{"GET", "/v1/papers/before/similar", ""},
		{"POST", "/v1/papers", paper("during")},
		{"DELETE", "/v1/papers/before", ""},
	}
	for _, r := range requests {
		resp, body := send(r.method, r.path, r.body)
		var p struct {
			Status int    `json:"status"`
			Type   string `json:"type"`
			Detail string `json:"detail"`
		}
		json.Unmarshal([]byte(body), &p)
		if resp.StatusCode != 503 || p.Status != 503 || resp.Header.Get("Content-Type") != "application/problem+json" ||
			resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s %s with Qdrant down: %d (Retry-After %q) %s", r.method, r.path, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
		if strings.Contains(body, "127.0.0.1") || strings.Contains(body, "rpc error") {
			t.Errorf("%s %s: the problem exposes internals: %s", r.method, r.path, body)
		}
	}
	if resp, body := send("GET", "/readyz", ""); resp.StatusCode != 503 || strings.Contains(body, "127.0.0.1") {
		t.Errorf("readyz with Qdrant down: %d %s", resp.StatusCode, body)
	}

	node.run("start", "0") // returns once Qdrant's own /readyz answers
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, _ := send("GET", "/readyz", "")
		if resp.StatusCode == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("papersearch not ready again after Qdrant came back:\n%s", logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if resp, body := send("POST", "/v1/papers", paper("after")); resp.StatusCode != 200 {
		t.Errorf("the first write after Qdrant is ready: %d %s\nlog:\n%s", resp.StatusCode, body, logs)
	}
	for _, id := range []string{"before", "after"} {
		if resp, body := send("GET", "/v1/papers/"+id, ""); resp.StatusCode != 200 {
			t.Errorf("paper %s after the outage: %d %s", id, resp.StatusCode, body)
		}
	}
	if resp, body := send("POST", "/v1/search", `{"query":"vector store outage","limit":5}`); resp.StatusCode != 200 {
		t.Errorf("search after the outage: %d %s", resp.StatusCode, body)
	}
}
