package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search/qdrant"
	"github.com/papersearch/papersearch/search/sqlite"
	"github.com/papersearch/papersearch/search/storage"
)

// crashRounds is how many times each crash test kills the process.
const crashRounds = 6

// binDir is the folder buildBinary builds into, removed once the tests
// are done (TestMain): a binary is 200 MiB.
var binDir = sync.OnceValues(func() (string, error) { return os.MkdirTemp("", "papersearch-bin-") })

// TestMain runs the package's tests, then removes the binary they built.
func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := binDir(); err == nil {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// buildBinary builds papersearch once for the tests that run it as a process.
var buildBinary = sync.OnceValues(func() (string, error) {
	dir, err := binDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "papersearch")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// crashEnv is the environment of a papersearch process under test: its own
// data dir and the fast hash embedding endpoint.
func crashEnv(t *testing.T, dataDir, embedURL string, extra ...string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"PAPERSEARCH_DATA_DIR=" + dataDir, "PAPERSEARCH_EMBED_URL=" + embedURL, "PAPERSEARCH_EMBED_MODEL=hash-64",
		"PAPERSEARCH_EMBED_BATCH=25", "PAPERSEARCH_EMBED_CONCURRENCY=1", "PAPERSEARCH_SEED=false", "PAPERSEARCH_RATE_LIMIT=0",
		"PAPERSEARCH_PROGRESS_EVERY=0", "PAPERSEARCH_EMBED_CACHE=" + filepath.Join(t.TempDir(), "embeddings.db")} // a line per stored batch: each is an acknowledgement
	return append(env, extra...)
}

func writeCorpus(t *testing.T, n int) string {
	path := filepath.Join(t.TempDir(), "corpus.jsonl")
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"id":"c%04d","title":"Crash paper %d","abstract":"Paper %d about topic %d and method %d.","year":%d}`+"\n",
			i, i, i, i%37, i%11, 1990+i%30)
	}
	os.WriteFile(path, b.Bytes(), 0o644)
	return path
}

// openCrashStore opens the store the process wrote, as the next start would.
func openCrashStore(t *testing.T, dataDir, qdrantURL, coll string) storage.Store {
	t.Helper()
	model := embed.ModelInfo{Name: "hash-64", Dim: 64}
	if qdrantURL != "" {
		q, err := qdrant.Open(context.Background(), qdrant.Config{URL: qdrantURL, Collection: coll}, model)
		if err != nil {
			t.Fatalf("reopen qdrant after kill: %v", err)
		}
		return q
	}
	s, err := sqlite.Open(context.Background(), filepath.Join(dataDir, "papersearch.db"), model)
	if err != nil {
		t.Fatalf("reopen store after kill: %v", err)
	}
	// Exactly once: no id appears in two rows.
	db, _ := sql.Open("sqlite", "file:"+filepath.Join(dataDir, "papersearch.db")+"?mode=ro")
	var rows, distinct int
	db.QueryRow(`SELECT COUNT(*), COUNT(DISTINCT id) FROM papers`).Scan(&rows, &distinct)
	db.Close()
	if rows != distinct {
		t.Errorf("%d rows for %d distinct papers", rows, distinct)
	}
	return s
}

var storedRE = regexp.MustCompile(`papers stored \((\d+) new\)`)

// crashBackends are the stores the crash tests run against.
func crashBackends(t *testing.T) map[string]string {
	b := map[string]string{"embedded": ""}
	if u := os.Getenv("PAPERSEARCH_TEST_QDRANT_URL"); u != "" {
		b["qdrant"] = u
	}
	return b
}

// TestKillDuringIngest kills 'papersearch ingest' with SIGKILL at random
// moments: after each kill the store opens, every batch the process had
// reported stored is there exactly once, and a final run completes the rest
// with no duplicates.
func TestKillDuringIngest(t *testing.T) {
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	corpus := writeCorpus(t, n)
	embedURL := slowHashEndpoint(t, 15*time.Millisecond) // 120 requests: kills land mid-ingest
	for name, qurl := range crashBackends(t) {
		t.Run(name, func(t *testing.T) {
			dataDir := t.TempDir()
			suffix := make([]byte, 4)
			rand.Read(suffix)
			coll := "crash_" + hex.EncodeToString(suffix)
			env := crashEnv(t, dataDir, embedURL, "PAPERSEARCH_QDRANT_URL="+qurl, "PAPERSEARCH_COLLECTION="+coll)
			if qurl == "" {
				env = crashEnv(t, dataDir, embedURL)
			}
			r := mrand.New(mrand.NewPCG(uint64(time.Now().UnixNano()), 1))
			acked, killed := 0, 0
			for round := range crashRounds {
				cmd := exec.Command(bin, "ingest", corpus)
				cmd.Env = env
				stderr, _ := cmd.StderrPipe()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				var mu sync.Mutex
				lastStored := 0
				done := make(chan struct{})
				go func() {
					defer close(done)
					sc := bufio.NewScanner(stderr)
					for sc.Scan() {
						if m := storedRE.FindStringSubmatch(sc.Text()); m != nil {
							v, _ := strconv.Atoi(m[1])
							mu.Lock()
							lastStored = v
							mu.Unlock()
						}
					}
				}()
				time.Sleep(time.Duration(100+r.IntN(900)) * time.Millisecond)
				cmd.Process.Signal(syscall.SIGKILL)
				cmd.Wait()
				<-done
				mu.Lock()
				roundAcked := lastStored
				mu.Unlock()
				killed++
				store := openCrashStore(t, dataDir, qurl, coll)
				count, err := store.Count(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				// This run's acknowledged batches come on top of earlier runs'.
				if count < acked+roundAcked {
					t.Errorf("round %d: %d papers stored, but %d were acknowledged", round, count, acked+roundAcked)
				}
				acked = count
				store.Close()
				t.Logf("round %d: killed after %d acknowledged this run; %d of %d stored", round, roundAcked, count, n)
			}
			// A run to the end completes the rest, without duplicates.
			cmd := exec.Command(bin, "ingest", corpus)
			cmd.Env = env
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("final ingest: %v", err)
			}
			store := openCrashStore(t, dataDir, qurl, coll)
			defer store.Close()
			if q, ok := store.(*qdrant.Store); ok {
				defer q.Drop(context.Background())
			}
			count, _ := store.Count(context.Background())
			if count != n {
				t.Errorf("after the final run %d papers, want %d (%s)", count, n, out)
			}
			t.Logf("crash-kill rounds during ingest (%s): %d, papers lost: %d, final count %d of %d", name, killed, n-count, count, n)
		})
	}
}

// TestKillDuringPost kills 'papersearch serve' with SIGKILL while a client
// posts papers: every paper whose POST was answered 200 is there after the
// restart.
func TestKillDuringPost(t *testing.T) {
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	embedURL := hashEndpoint(t)
	for name, qurl := range crashBackends(t) {
		t.Run(name, func(t *testing.T) {
			dataDir := t.TempDir()
			suffix := make([]byte, 4)
			rand.Read(suffix)
			coll := "crashpost_" + hex.EncodeToString(suffix)
			r := mrand.New(mrand.NewPCG(uint64(time.Now().UnixNano()), 2))
			var acked []string
			next, lost := 0, 0
			for round := range crashRounds {
				env := crashEnv(t, dataDir, embedURL, "PAPERSEARCH_ADDR=127.0.0.1:0")
				if qurl != "" {
					env = append(env, "PAPERSEARCH_QDRANT_URL="+qurl, "PAPERSEARCH_COLLECTION="+coll)
				}
				cmd := exec.Command(bin, "serve")
				cmd.Env = env
				logs := new(testenv.Buffer)
				cmd.Stderr = logs
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				base := listeningURL(t, logs)
				for i := 0; i < 200; i++ {
					if resp, err := http.Get(base + "/healthz"); err == nil {
						resp.Body.Close()
						break
					}
					time.Sleep(25 * time.Millisecond)
				}
				stop := time.After(time.Duration(150+r.IntN(600)) * time.Millisecond)
				killedAt := make(chan struct{})
				go func() { <-stop; cmd.Process.Signal(syscall.SIGKILL); close(killedAt) }()
			post:
				for {
					select {
					case <-killedAt:
						break post
					default:
					}
					var b strings.Builder
					var ids []string
					b.WriteString(`{"papers":[`)
					for j := range 10 {
						id := fmt.Sprintf("post%05d", next)
						next++
						ids = append(ids, id)
						if j > 0 {
							b.WriteString(",")
						}
						fmt.Fprintf(&b, `{"id":%q,"abstract":"Posted paper %s on topic %d."}`, id, id, next%17)
					}
					b.WriteString("]}")
					resp, err := http.Post(base+"/v1/papers", "application/json", strings.NewReader(b.String()))
					if err != nil {
						continue // the server died mid-request: not acknowledged
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						acked = append(acked, ids...)
					}
				}
				cmd.Wait()
				store := openCrashStore(t, dataDir, qurl, coll)
				got, err := store.Lookup(context.Background(), acked)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(acked) {
					lost = len(acked) - len(got)
					t.Errorf("round %d: %d of %d acknowledged papers missing", round, lost, len(acked))
				}
				if round == crashRounds-1 {
					if q, ok := store.(*qdrant.Store); ok {
						q.Drop(context.Background())
					}
				}
				store.Close()
				t.Logf("round %d: %d papers acknowledged so far, all present", round, len(acked))
			}
			t.Logf("crash-kill rounds during POST (%s): %d, acknowledged papers: %d, papers lost: %d", name, crashRounds, len(acked), lost)
		})
	}
}

// listeningURL waits for a serve process's log to say where it listens:
// started on port 0, it takes a free port itself. (A port found free by the
// test and handed over could be taken in between by another package's
// test server, which then answered this test's requests: a crash test once
// counted papers another server acknowledged.)
func listeningURL(t *testing.T, logs *testenv.Buffer) string {
	t.Helper()
	re := regexp.MustCompile(`msg="papersearch listening" url=(http://127\.0\.0\.1:\d+)`)
	for range 1200 {
		if m := re.FindStringSubmatch(logs.String()); m != nil {
			return m[1]
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("serve did not say where it listens:\n%s", logs.String())
	return ""
}

// startBinary runs 'papersearch serve' as a process on a free loopback port
// and returns its base URL once it answers.
// startBinary starts serve with env and returns once it is ready; its log
// buffer may be read while the process still writes it.
func startBinary(t *testing.T, env []string) (*exec.Cmd, string, *testenv.Buffer) {
	t.Helper()
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(env, "PAPERSEARCH_ADDR=127.0.0.1:0")
	logs := new(testenv.Buffer)
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	base := listeningURL(t, logs)
	for i := 0; i < 400; i++ {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return cmd, base, logs
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	cmd.Process.Kill()
	t.Fatalf("serve did not become ready:\n%s", logs.String())
	return nil, "", nil
}

// TestSigtermDrainsRequests sends SIGTERM while requests are in flight:
// they complete, new connections are refused, and the process exits 0.
func TestSigtermDrainsRequests(t *testing.T) {
	// A slow embedding endpoint keeps each ingest request in flight ~300 ms.
	embedURL := slowHashEndpoint(t, 300*time.Millisecond)
	cmd, base, logs := startBinary(t, crashEnv(t, t.TempDir(), embedURL))
	results := make(chan int, 4)
	for i := range 4 {
		go func() {
			body := fmt.Sprintf(`{"papers":[{"id":"drain%d","abstract":"In flight at shutdown %d."}]}`, i, i)
			resp, err := http.Post(base+"/v1/papers", "application/json", strings.NewReader(body))
			if err != nil {
				results <- 0
				return
			}
			resp.Body.Close()
			results <- resp.StatusCode
		}()
	}
	time.Sleep(100 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	for range 4 {
		if code := <-results; code != http.StatusOK {
			t.Errorf("a request in flight at SIGTERM got %d, want 200", code)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, logs.String())
	}
	if !strings.Contains(logs.String(), "draining requests in flight") || !strings.Contains(logs.String(), "msg=stopped") {
		t.Errorf("shutdown not logged:\n%s", logs.String())
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("the server still answers after shutdown")
	}
}

// TestEmbedderDownDegrades runs the service on an embedding endpoint that
// then fails, and one slower than the query deadline: free-text search
// still answers 200 from the lexical side, saying degraded ["dense"];
// /readyz reports it; similar papers are unaffected.
func TestEmbedderDownDegrades(t *testing.T) {
	var mu sync.Mutex
	mode := "up"
	hash := hashEndpoint(t)
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		m := mode
		mu.Unlock()
		switch m {
		case "down":
			http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
			return
		case "slow":
			time.Sleep(3 * time.Second)
		}
		u, _ := url.Parse(hash)
		proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
		proxy.ServeHTTP(w, r)
	}))
	defer endpoint.Close()
	dataDir := t.TempDir()
	env := crashEnv(t, dataDir, endpoint.URL+"/v1", "PAPERSEARCH_SEED=true", "PAPERSEARCH_EMBED_RETRY_MAX=1s",
		"PAPERSEARCH_QUERY_EMBED_TIMEOUT=500ms")
	cmd, base, logs := startBinary(t, env)
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()

	for _, m := range []string{"down", "slow"} {
		mu.Lock()
		mode = m
		mu.Unlock()
		start := time.Now()
		resp, err := http.Post(base+"/v1/search", "application/json",
			strings.NewReader(fmt.Sprintf(`{"query":"expert value functions imitation %s","limit":3}`, m)))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"degraded":["dense"]`) || !strings.Contains(string(body), `"rank":1`) {
			t.Errorf("embedder %s: search %d %s\n%s", m, resp.StatusCode, body, logs.String())
		}
		resp, _ = http.Get(base + "/readyz")
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"degraded":["dense"]`) {
			t.Errorf("embedder %s: readyz %d %s", m, resp.StatusCode, body)
		}
		t.Logf("fault: embedder %s: search answered 200 with degraded [dense] in %v; readyz: %s", m, time.Since(start).Round(time.Millisecond), body)
	}
	// Similar papers need no query embedding.
	var sr struct{ Results []struct{ ID string } }
	r2, _ := http.Post(base+"/v1/search", "application/json", strings.NewReader(`{"query":"contact","mode":"lexical","limit":1}`))
	json.NewDecoder(r2.Body).Decode(&sr)
	r2.Body.Close()
	if len(sr.Results) == 1 {
		r3, _ := http.Get(base + "/v1/papers/" + sr.Results[0].ID + "/similar?limit=3")
		b3, _ := io.ReadAll(r3.Body)
		r3.Body.Close()
		if r3.StatusCode != 200 || !strings.Contains(string(b3), `"degraded":[]`) {
			t.Errorf("similar with the embedder down: %d %s", r3.StatusCode, b3)
		}
	}
}

// TestSignalExitStatus stops 'papersearch ingest' with SIGINT and with
// SIGTERM: each says what it stored and exits as the shell's convention
// for a command a signal ended has it, 128 plus the signal's number.
func TestSignalExitStatus(t *testing.T) {
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	corpus := writeCorpus(t, 2000)
	embedURL := slowHashEndpoint(t, 50*time.Millisecond)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd := exec.Command(bin, "ingest", corpus)
		cmd.Env = crashEnv(t, t.TempDir(), embedURL)
		stderr := new(testenv.Buffer)
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 400 && !storedRE.MatchString(stderr.String()); i++ {
			time.Sleep(25 * time.Millisecond) // until a batch is stored
		}
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 128+int(sig) {
			t.Errorf("%v: %v, want exit status %d\n%s", sig, err, 128+int(sig), stderr.String())
		}
		if said := stderr.String(); !strings.Contains(said, "papersearch: stopped by "+sig.String()) || !strings.Contains(said, "what was stored stays") {
			t.Errorf("%v: said\n%s", sig, said)
		}
	}
}
