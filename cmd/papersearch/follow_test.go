package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	"github.com/papersearch/papersearch/search/qdrant"
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
	a, b := serveProcess(t, bin, env).URL, serveProcess(t, bin, env).URL
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
		`{"papers":[{"id":"post-1","title":"Quokka ecology","abstract":"Quokkas on Rottnest Island."},{"id":"post-2","title":"Quokka diet","abstract":"What quokkas eat."}]}`))
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

	// An alert made through one server is answered by the other, its feed
	// too; deleted through the other, it is gone from both.
	resp, err = http.Post(a+"/v1/alerts", "application/json", strings.NewReader(`{"query":"quokka island ecology"}`))
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("POST /v1/alerts: %v %v", resp, err)
	}
	var alert struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&alert)
	resp.Body.Close()
	status := func(method, url string) int {
		req, _ := http.NewRequest(method, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status("GET", b+"/v1/alerts/"+alert.ID); got != 200 {
		t.Errorf("the alert through the other server: %d", got)
	}
	if got := status("GET", b+"/v1/alerts/"+alert.ID+"/feed.atom"); got != 200 {
		t.Errorf("its feed through the other server: %d", got)
	}
	if got := status("DELETE", b+"/v1/alerts/"+alert.ID); got != 204 {
		t.Errorf("DELETE through the other server: %d", got)
	}
	if got := status("GET", a+"/v1/alerts/"+alert.ID); got != 404 {
		t.Errorf("the deleted alert through the first server: %d", got)
	}
	// A page's cursor from one server is taken by the other: one key.
	resp, err = http.Post(a+"/v1/search", "application/json", strings.NewReader(`{"query":"quokka","mode":"lexical","limit":1}`))
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		NextCursor string `json:"next_cursor"`
	}
	json.NewDecoder(resp.Body).Decode(&page)
	resp.Body.Close()
	if page.NextCursor == "" {
		t.Fatal("no second page of two quokka papers")
	}
	resp, err = http.Post(b+"/v1/search", "application/json", strings.NewReader(`{"query":"quokka","mode":"lexical","limit":1,"cursor":"`+page.NextCursor+`"}`))
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("the first server's cursor on the second: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
}

// TestTwoInstancesOnQdrant: two servers, each with a data folder of its
// own, on one Qdrant collection, as deploy/k8s runs them: an alert made
// through one is answered (and its feed served) by the other and deleted
// through it; a page's cursor from one is taken by the other; a paper
// posted to one is found by the other's search.
func TestTwoInstancesOnQdrant(t *testing.T) {
	qurl := os.Getenv("PAPERSEARCH_TEST_QDRANT_URL")
	if qurl == "" {
		testenv.Missing(t, "PAPERSEARCH_TEST_QDRANT_URL is not set: start one with deploy/qdrant-local.sh up and export the URL it prints")
	}
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	suffix := make([]byte, 4)
	rand.Read(suffix)
	coll := "twoinst_" + hex.EncodeToString(suffix)
	embedURL := hashEndpoint(t)
	start := func() string {
		return serveProcess(t, bin, crashEnv(t, t.TempDir(), embedURL, "PAPERSEARCH_ADDR=127.0.0.1:0",
			"PAPERSEARCH_QDRANT_URL="+qurl, "PAPERSEARCH_COLLECTION="+coll)).URL
	}
	a, b := start(), start()
	t.Cleanup(func() {
		q := openCrashStore(t, t.TempDir(), qurl, coll)
		q.(*qdrant.Store).Drop(context.Background())
		q.Close()
	})
	post := func(url, body string) (int, []byte) {
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, out
	}
	status := func(method, url string) int {
		req, _ := http.NewRequest(method, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code, body := post(a+"/v1/papers", `{"papers":[{"id":"q-1","title":"Quokka ecology","abstract":"Quokkas on Rottnest Island."},{"id":"q-2","title":"Quokka diet","abstract":"What quokkas eat."}]}`); code != 200 {
		t.Fatalf("POST papers: %d %s", code, body)
	}
	// The other instance counts the collection's document frequencies
	// again once its point count (read every 2 s at most) shows another
	// writer.
	var page struct {
		Results    []struct{ ID string } `json:"results"`
		NextCursor string                `json:"next_cursor"`
	}
	began := time.Now()
	for {
		code, body := post(b+"/v1/search", `{"query":"quokka","mode":"lexical","limit":1}`)
		if json.Unmarshal(body, &page); code == 200 && len(page.Results) == 1 && page.NextCursor != "" {
			break
		}
		if time.Since(began) > 5*time.Second {
			t.Fatalf("search through the other instance after 5 s: %d %s", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("reliability: a paper posted to one Qdrant instance found by the other's search in %v", time.Since(began).Round(time.Millisecond))
	if code, body := post(a+"/v1/search", `{"query":"quokka","mode":"lexical","limit":1,"cursor":"`+page.NextCursor+`"}`); code != 200 {
		t.Errorf("the second instance's cursor on the first: %d %s", code, body)
	}
	code, body := post(a+"/v1/alerts", `{"query":"quokka island ecology"}`)
	var alert struct{ ID string }
	if json.Unmarshal(body, &alert); code != 201 || alert.ID == "" {
		t.Fatalf("POST /v1/alerts: %d %s", code, body)
	}
	if got := status("GET", b+"/v1/alerts/"+alert.ID); got != 200 {
		t.Errorf("the alert through the other instance: %d", got)
	}
	if got := status("GET", b+"/v1/alerts/"+alert.ID+"/feed.atom"); got != 200 {
		t.Errorf("its feed through the other instance: %d", got)
	}
	if got := status("DELETE", b+"/v1/alerts/"+alert.ID); got != 204 {
		t.Errorf("DELETE through the other instance: %d", got)
	}
	if got := status("GET", a+"/v1/alerts/"+alert.ID); got != 404 {
		t.Errorf("the deleted alert through the first instance: %d", got)
	}
	// A watch made through one is listed and deleted through the other.
	code, body = post(a+"/v1/watches", `{"source":"arxiv","target":"cat:cs.LG","every":"1d"}`)
	var watch struct{ ID string }
	if json.Unmarshal(body, &watch); code != 201 || watch.ID == "" {
		t.Fatalf("POST /v1/watches: %d %s", code, body)
	}
	listed := func(base string) string {
		resp, err := http.Get(base + "/v1/watches")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := listed(b); !strings.Contains(got, watch.ID) {
		t.Errorf("the watch through the other instance: %s", got)
	}
	if got := status("DELETE", b+"/v1/watches/"+watch.ID); got != 204 {
		t.Errorf("DELETE the watch through the other instance: %d", got)
	}
	if got := listed(a); strings.Contains(got, watch.ID) {
		t.Errorf("the deleted watch through the first instance: %s", got)
	}
}

// served is a 'papersearch serve' process under test.
type served struct {
	URL    string
	cmd    *exec.Cmd
	logs   *testenv.Buffer
	exited chan struct{}
}

// stop ends the process as a rolling update does: SIGTERM, then it has
// 20 s to drain its requests, stop its runs and exit.
func (s *served) stop(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not exit within 20 s of SIGTERM:\n%s", s.logs)
	}
	if !s.cmd.ProcessState.Success() {
		t.Errorf("serve exited with %v after SIGTERM:\n%s", s.cmd.ProcessState, s.logs)
	}
}

// serveProcess starts 'papersearch serve' (bin) with env, killed when the
// test ends, and returns it once it is ready (/readyz 200, 20 s at most).
func serveProcess(t *testing.T, bin string, env []string) *served {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Env = env
	logs := new(testenv.Buffer)
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	s := &served{URL: listeningURL(t, logs), cmd: cmd, logs: logs, exited: exited}
	for range 800 {
		if resp, err := http.Get(s.URL + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("server not ready:\n%s", logs)
	return nil
}
