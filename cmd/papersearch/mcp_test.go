package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/papersearch/papersearch/internal/testenv"
)

// requireMCPSDK skips (fails under PAPERSEARCH_TEST_STRICT) unless
// python3 has the official MCP SDK's 2.x releases, whose API
// testdata/mcp_client.py is written for (the latest; 1.x named its
// fields in camelCase), and jsonschema.
func requireMCPSDK(t *testing.T) {
	t.Helper()
	check := `import importlib.metadata as m, jsonschema, mcp; assert m.version("mcp").startswith("2.")`
	if exec.Command("python3", "-c", check).Run() != nil {
		testenv.Missing(t, "python3 with the MCP SDK 2.x is not installed (scripts/test installs it: pip install 'mcp==2.*')")
	}
}

// TestMCPWithPythonSDK drives both MCP transports with the official Python
// MCP SDK (testdata/mcp_client.py): the HTTP service's /mcp and `papersearch
// mcp` over stdio, on the seed corpus. Each lists the tools and the paper
// resource, calls every tool with valid arguments (the results must match
// their output schemas and be what the REST API answers for the same
// request) and with invalid ones (tool errors naming the reason), imports
// a paper and follows the import to its end, and reads a paper as JSON and
// BibTeX.
func TestMCPWithPythonSDK(t *testing.T) {
	requireMCPSDK(t)
	// The REST answers and the stdio session's come from two processes:
	// measured apart (PAPERSEARCH_PRECISION auto), on a busy machine one
	// chose int8 and the other float32, and their scores differed in the
	// third decimal. The first records its measurement in the user's cache
	// folder, a fresh one here, and the second takes it from there.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := setEnv(t)
	url, _, stop := startServe(t)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()

	// What the REST API answers, for the MCP tools to match.
	post := func(path, body string) map[string]any {
		t.Helper()
		resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("POST %s: %d %v", path, resp.StatusCode, err)
		}
		return out
	}
	get := func(path string) map[string]any {
		t.Helper()
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
		}
		return out
	}
	searchReq := map[string]any{"query": "robots that learn manipulation from human videos", "limit": 5, "explain": true}
	body, _ := json.Marshal(searchReq)
	found := post("/v1/search", string(body))
	first := found["results"].([]any)[0].(map[string]any)["id"].(string)
	// A collection of one paper for recommend (writes are open on loopback).
	post("/v1/collections/mcp-test/papers", `{"ids":["`+first+`"]}`)
	expected := map[string]any{
		"recommend": map[string]any{"request": map[string]any{"tag": "mcp-test", "limit": 3, "method": "centroid"},
			"response": get("/v1/collections/mcp-test/recommendations?limit=3&method=centroid")},
		"search":      map[string]any{"request": searchReq, "response": found},
		"similar":     map[string]any{"request": map[string]any{"id": first, "limit": 4, "aspect": "method"}, "response": get("/v1/papers/" + first + "/similar?limit=4&aspect=method")},
		"paper":       get("/v1/papers/" + first),
		"collections": get("/v1/collections"),
	}
	expectedPath := filepath.Join(t.TempDir(), "expected.json")
	raw, _ := json.Marshal(expected)
	if err := os.WriteFile(expectedPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	client := func(args ...string) {
		t.Helper()
		cmd := exec.Command("python3", append([]string{filepath.Join("testdata", "mcp_client.py")}, args...)...)
		cmd.Env = append(os.Environ(), "PAPERSEARCH_LOG_LEVEL=warn")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "ok") {
			t.Errorf("mcp_client.py %s: %v\n%s", args[0], err, out)
		}
	}
	client("http", url+"/mcp", expectedPath)
	// The client imported a paper last; without it the corpus is the one
	// the expected answers came from again.
	req, _ := http.NewRequest("DELETE", url+"/v1/papers/bibtex:mcp1", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete the imported paper: %v %v", err, resp)
	}

	// Over stdio, on the same store once the HTTP service has stopped.
	stop()
	stopped = true
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PAPERSEARCH_DATA_DIR", dir)
	client("stdio", bin, expectedPath)
}

// TestMCPStdioSurvivesMalformedMessages: a line that is not JSON-RPC gets
// an error or nothing, and the session goes on to answer the next request.
func TestMCPStdioSurvivesMalformedMessages(t *testing.T) {
	dir := setEnv(t)
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "mcp")
	// Messages of up to 16 × 4 KiB.
	cmd.Env = append(os.Environ(), "PAPERSEARCH_DATA_DIR="+dir, "PAPERSEARCH_SEED=false", "PAPERSEARCH_LOG_LEVEL=warn", "PAPERSEARCH_MAX_BODY=4096")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Error("papersearch mcp did not exit when its stdin closed")
		}
	}()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatalf("write %q: %v (stderr: %s)", s, err, stderr.String())
		}
	}
	// answer waits for the response to request id, keeping the others.
	responses := map[string]map[string]any{}
	answer := func(id int) map[string]any {
		t.Helper()
		timeout := time.After(60 * time.Second)
		for responses[fmt.Sprint(id)] == nil {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("papersearch mcp closed its output waiting for response %d; stderr:\n%s", id, stderr.String())
				}
				var msg map[string]any
				if json.Unmarshal([]byte(line), &msg) == nil {
					responses[fmt.Sprint(msg["id"])] = msg
				}
			case <-timeout:
				t.Fatalf("no response %d; stderr:\n%s", id, stderr.String())
			}
		}
		return responses[fmt.Sprint(id)]
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	if r := answer(1); r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, bad := range []string{`not json at all`, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"nope"}`, `{"jsonrpc":"2.0","id":8,"method":"no/such/method"}`, `[1,2`,
		`{"jsonrpc":"2.0","id":9,"method":3}`, `{"jsonrpc":"2.0","id":11}`, `{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"x":"` + strings.Repeat("a", 70000) + `"}}`} {
		send(bad)
	}
	// Each answered with its id (JSON-RPC's codes for what is not a message).
	for id, code := range map[int]float64{7: -32602, 8: -32601, 9: -32600, 11: -32600} {
		r := answer(id)
		if e, _ := r["error"].(map[string]any); e == nil || code != -32602 && e["code"] != code {
			t.Errorf("response %d to a malformed message: %v", id, r)
		}
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	r := answer(2)
	tools, _ := r["result"].(map[string]any)["tools"].([]any)
	if len(tools) < 3 {
		t.Errorf("tools/list after malformed messages: %v", r)
	}
}

// TestMCPFirstSearchOnFreshFolder: an assistant that starts 'papersearch
// mcp' on a fresh data folder and asks at once, right after initialize
// (the official Python SDK over stdio), gets the seed corpus's answer: the
// tools wait for seeding (it answered "papers": 0 before).
func TestMCPFirstSearchOnFreshFolder(t *testing.T) {
	requireMCPSDK(t)
	setEnv(t) // a fresh data folder, seeding on
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("python3", "testdata/mcp_client.py", "fresh", bin, "5")
	cmd.Env = append(os.Environ(), "PAPERSEARCH_LOG_LEVEL=warn")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "ok") {
		t.Errorf("the first search on a fresh folder: %v\n%s", err, out)
	}
}
