package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/papersearch/papersearch/internal/testenv"
)

// TestOneFolderManyProcesses: two servers and the command line on one data
// folder, as a user who ingests while the server is up, or runs a second
// server on it, does. What any of them writes (the CLI's ingest, a POST to
// one server, a DELETE through the other) is found, or no longer found, by
// every running server's searches within 5 s.
func TestOneFolderManyProcesses(t *testing.T) {
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	env := crashEnv(t, dataDir, hashEndpoint(t), "PAPERSEARCH_ADDR=127.0.0.1:0")
	start := func() string {
		cmd := exec.Command(bin, "serve")
		cmd.Env = env
		logs := new(testenv.Buffer)
		cmd.Stderr = logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		base := listeningURL(t, logs)
		for i := 0; i < 400; i++ {
			if resp, err := http.Get(base + "/readyz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					return base
				}
			}
			time.Sleep(25 * time.Millisecond)
		}
		t.Fatalf("server not ready:\n%s", logs)
		return ""
	}
	a, b := start(), start()
	finds := func(base, word string) bool {
		resp, err := http.Post(base+"/v1/search", "application/json", strings.NewReader(`{"query":"`+word+`","mode":"lexical"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var res struct {
			Results []struct{ ID string } `json:"results"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
			t.Fatalf("search %s: %d %v", base, resp.StatusCode, err)
		}
		return len(res.Results) > 0
	}
	// within waits until every server agrees that word is found (want) or
	// not, and says how long that took.
	within := func(what, word string, want bool) {
		t.Helper()
		began := time.Now()
		for _, base := range []string{a, b} {
			for finds(base, word) != want {
				if time.Since(began) > 5*time.Second {
					t.Fatalf("%s: %s still answers %q found=%v after 5 s", what, base, word, !want)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		t.Logf("reliability: %s: every server agreed in %v", what, time.Since(began).Round(time.Millisecond))
	}

	corpus := filepath.Join(t.TempDir(), "one.jsonl")
	os.WriteFile(corpus, []byte(`{"id":"cli-1","title":"Axolotl regeneration","abstract":"How the axolotl regrows a limb."}`+"\n"), 0o644)
	ingest := exec.Command(bin, "ingest", corpus)
	ingest.Env = env
	if out, err := ingest.CombinedOutput(); err != nil {
		t.Fatalf("ingest beside two servers: %v\n%s", err, out)
	}
	within("a paper the command line ingested", "axolotl", true)

	resp, err := http.Post(b+"/v1/papers", "application/json", strings.NewReader(
		`{"papers":[{"id":"post-1","title":"Quokka ecology","abstract":"Quokkas on Rottnest Island."}]}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST to the second server: %v %v", resp, err)
	}
	resp.Body.Close()
	within("a paper posted to the other server", "quokka", true)

	req, _ := http.NewRequest("DELETE", a+"/v1/papers/cli-1", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 204 {
		t.Fatalf("DELETE through the first server: %v %v", resp, err)
	}
	within("a paper deleted through the other server", "axolotl", false)
}
