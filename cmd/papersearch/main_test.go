package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/testenv"
)

var listenRE = regexp.MustCompile(`papersearch listening" url=(http://127\.0\.0\.1:\d+)`)

// startServe runs 'papersearch serve' in-process until the returned stop
// is called, and returns its base URL once /readyz answers 200.
func startServe(t *testing.T) (url string, logs *testenv.Buffer, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs = &testenv.Buffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, io.Discard, logs) }()
	stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve returned %v", err)
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if m := listenRE.FindStringSubmatch(logs.String()); m != nil {
			url = m[1]
			if resp, err := http.Get(url + "/readyz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					return url, logs, stop
				}
			}
		}
		select {
		case err := <-done:
			t.Fatalf("serve exited early: %v\n%s", err, logs)
		case <-time.After(100 * time.Millisecond):
		}
	}
	stop()
	t.Fatalf("serve not ready in time:\n%s", logs)
	return
}

func setEnv(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("PAPERSEARCH_DATA_DIR", dir)
	t.Setenv("PAPERSEARCH_ADDR", "127.0.0.1:0")
	t.Setenv("PAPERSEARCH_EMBED_CACHE", filepath.Join(t.TempDir(), "embeddings.db"))
	return dir
}

func TestServeSeedsThenRestartsWithoutReembedding(t *testing.T) {
	dir := setEnv(t)
	url, logs, stop := startServe(t)
	if !strings.Contains(logs.String(), "store is empty: ingesting the seed corpus") {
		t.Errorf("first start did not seed:\n%s", logs)
	}
	resp, err := http.Post(url+"/v1/search", "application/json",
		strings.NewReader(`{"query":"why do people misjudge probabilities?","limit":1}`))
	if err != nil {
		t.Fatal(err)
	}
	var sr struct {
		Results []struct {
			Paper struct{ Abstract string }
		}
		Index struct{ Papers int }
	}
	json.NewDecoder(resp.Body).Decode(&sr)
	resp.Body.Close()
	if sr.Index.Papers != 19 || len(sr.Results) != 1 ||
		!strings.HasPrefix(sr.Results[0].Paper.Abstract, "Humans systematically misrepresent probability") {
		t.Errorf("search on the seeded service: %+v", sr)
	}
	stop()
	if _, err := os.Stat(filepath.Join(dir, "papersearch.db")); err != nil {
		t.Fatalf("no store file in the data dir: %v", err)
	}

	// Second start: the store is kept and nothing is embedded again.
	url, logs, stop = startServe(t)
	defer stop()
	if strings.Contains(logs.String(), "ingest") || !strings.Contains(logs.String(), "papers=19") {
		t.Errorf("second start re-ingested or lost papers:\n%s", logs)
	}
	resp, err = http.Get(url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"papers":19`) {
		t.Errorf("readyz after restart: %s", body)
	}
}

func TestCLI(t *testing.T) {
	setEnv(t)
	t.Setenv("PAPERSEARCH_LOG_LEVEL", "warn")
	ctx := context.Background()
	corpus := filepath.Join(t.TempDir(), "papers.jsonl")
	os.WriteFile(corpus, []byte(strings.Join([]string{
		`{"id":"g1","title":"Graph neural networks for molecules","abstract":"We predict molecular properties with message passing on atom graphs.","authors":["A. Chem"],"venue":"ICML","year":2020}`,
		`{"id":"g2","title":"Speech recognition with transformers","abstract":"An end-to-end acoustic model transcribes spoken audio into text.","year":2021,"tags":["lib"]}`,
		`{"id":"bad","title":"No abstract"}`,
		`not json`,
		`{"id":"g3","title":"Protein structure prediction","abstract":"Deep networks fold amino acid sequences into 3D protein structures.","year":2021}`,
		// The published version of g1: one paper with it.
		`{"id":"doi:10.1/g1","title":"Graph Neural Networks for Molecules","abstract":"We predict molecular properties with message passing.","authors":["Chem, A."],"venue":"NeurIPS","year":2021}`,
	}, "\n")), 0o644)

	var out, errs bytes.Buffer
	if err := run(ctx, []string{"ingest", corpus}, &out, &errs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "6 records; 3 new, 0 updated, 0 unchanged; 1 merged with another version of their work; 2 rejected") ||
		!strings.Contains(out.String(), "3 embedded") {
		t.Errorf("first ingest summary: %s", out.String())
	}
	if !strings.Contains(errs.String(), "papers.jsonl:3: rejected: abstract is empty") ||
		!strings.Contains(errs.String(), "papers.jsonl:4: rejected: invalid JSON") {
		t.Errorf("rejections not reported with line numbers:\n%s", errs.String())
	}
	out.Reset()
	if err := run(ctx, []string{"ingest", corpus}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "0 new, 0 updated, 3 unchanged") || !strings.Contains(out.String(), "0 embedded") {
		t.Errorf("second ingest summary: %s", out.String())
	}

	out.Reset()
	if err := run(ctx, []string{"search", "how do proteins fold?", "--limit", "2"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "g3") || !strings.Contains(lines[1], "Protein structure prediction") {
		t.Errorf("search output:\n%s", out.String())
	}

	out.Reset()
	if err := run(ctx, []string{"similar", "--json", "g1"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var sr struct {
		Results []struct{ ID string }
		Index   struct{ Papers int }
	}
	if err := json.Unmarshal(out.Bytes(), &sr); err != nil {
		t.Fatalf("similar --json: %v\n%s", err, out.String())
	}
	if len(sr.Results) != 2 || sr.Index.Papers != 3 {
		t.Errorf("similar --json: %+v", sr)
	}
	for _, r := range sr.Results {
		if r.ID == "g1" {
			t.Error("similar returned the paper itself")
		}
	}

	out.Reset()
	if err := run(ctx, []string{"recommend", "LIB", "--limit", "1", "--method", "centroid", "--since", "2021-01-01"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 2 || !strings.Contains(lines[0], "NEAREST MEMBER") ||
		!strings.HasSuffix(lines[1], "g2") || strings.Contains(lines[1], "g2\t") {
		t.Errorf("recommend output:\n%s", out.String())
	}

	for _, args := range [][]string{{"similar", "nope"}, {"search"}, {"search", "a", "b"}, {"search", "--limit", "0", "x"},
		{"frobnicate"}, {"ingest"}, {"ingest", "/no/such/file"}, {"recommend", "nobody"}, {"recommend", "lib", "--mode", "dense"},
		{"recommend", "lib", "--method", "svm"}} {
		if err := run(ctx, args, io.Discard, io.Discard); err == nil {
			t.Errorf("papersearch %s succeeded", strings.Join(args, " "))
		}
	}
	out.Reset()
	if err := run(ctx, []string{"help"}, &out, io.Discard); err != nil || !strings.Contains(out.String(), "PAPERSEARCH_DATA_DIR") {
		t.Errorf("help: %v\n%s", err, out.String())
	}
}

func TestBadConfig(t *testing.T) {
	setEnv(t)
	for k, v := range map[string]string{"PAPERSEARCH_LOG_LEVEL": "loud", "PAPERSEARCH_MAX_BODY": "-1", "PAPERSEARCH_SEED": "maybe", "PAPERSEARCH_ADDR": "nonsense"} {
		t.Run(k, func(t *testing.T) {
			t.Setenv(k, v)
			err := run(context.Background(), []string{"serve"}, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), "configuration") {
				t.Errorf("%s=%s: err = %v", k, v, err)
			}
		})
	}
}

// TestSettingHint: the errors a setting causes name the variable to fix,
// however deeply they are wrapped; others get no hint.
func TestSettingHint(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("ingest: embed papers 1-8: %w", fmt.Errorf("HTTP 401: %w", embed.ErrAPIKey)), "PAPERSEARCH_EMBED_API_KEY"},
		{fmt.Errorf("probe: %w", embed.ErrModelNotServed), "PAPERSEARCH_EMBED_URL ends with /v1"},
		{fmt.Errorf("embed: %w", embed.ErrDimensions), "PAPERSEARCH_EMBED_MODEL"},
		{errors.New("disk full"), ""},
		{fmt.Errorf("http://127.0.0.1:8080: %w", &wire.Problem{Status: 401, Title: "Unauthorized"}), "PAPERSEARCH_API_KEY"},
	} {
		got := settingHint(tt.err)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("settingHint(%v) = %q, want it to mention %q", tt.err, got, tt.want)
		}
	}
}

// TestIngestJSONLByName: a .jsonl file is read as JSON lines whatever its
// first line holds (it was read as seed text when that line was not an
// object, its lines stored as abstracts); a truncated gzip file names the
// gzip stream and says what was stored.
func TestIngestJSONLByName(t *testing.T) {
	setEnv(t)
	t.Setenv("PAPERSEARCH_LOG_LEVEL", "warn")
	t.Setenv("PAPERSEARCH_MODEL", "all-MiniLM-L6-v2")
	ctx := context.Background()
	corpus := filepath.Join(t.TempDir(), "first-bad.jsonl")
	os.WriteFile(corpus, []byte("garbage\n"+`{"id":"ok1","title":"Graphs","abstract":"Message passing on graphs predicts molecular properties."}`+"\n"), 0o644)
	var out, errs bytes.Buffer
	if err := run(ctx, []string{"ingest", corpus}, &out, &errs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "2 records; 1 new") || !strings.Contains(errs.String(), "first-bad.jsonl:1: rejected: invalid JSON") {
		t.Errorf("ingest of a .jsonl file whose first line is not JSON:\n%s%s", out.String(), errs.String())
	}

	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	for i := range 50 {
		fmt.Fprintf(zw, `{"id":"z%d","abstract":"Paper %d studies topic %d with a method of its own and reports results."}`+"\n", i, i, i)
	}
	zw.Close()
	cut := filepath.Join(t.TempDir(), "cut.jsonl.gz")
	os.WriteFile(cut, gz.Bytes()[:gz.Len()*2/3], 0o644)
	errs.Reset()
	err := run(ctx, []string{"ingest", cut}, io.Discard, &errs)
	if err == nil || !strings.Contains(err.Error(), "read gzip stream (is the file cut short?)") || !strings.Contains(errs.String(), "stopped; what was stored stays") {
		t.Errorf("ingest of a truncated gzip file: %v\n%s", err, errs.String())
	}
}

// TestServeOnATakenPortCreatesNothing: a start whose address another
// process holds fails naming the address, before any store is opened: a
// fresh data folder stays as it was.
func TestServeOnATakenPortCreatesNothing(t *testing.T) {
	setEnv(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := filepath.Join(t.TempDir(), "fresh")
	t.Setenv("PAPERSEARCH_DATA_DIR", dir)
	t.Setenv("PAPERSEARCH_ADDR", taken.Addr().String())
	err = run(context.Background(), nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "listen on "+taken.Addr().String()) {
		t.Fatalf("serve on a taken port: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the data folder was made: %v", err)
	}
}

// TestLikelyFormat: a file the command did not read is named by what it
// looks like, binary files and PDFs included.
func TestLikelyFormat(t *testing.T) {
	for head, want := range map[string]string{
		"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR": "not text",
		"%PDF-1.7\n%\xe2\xe3\xcf\xd3":         "PDF",
		"  @article{k, title={T}}":            "BibTeX",
		`[{"title": "T"}]`:                    "CSL-JSON",
		`{"title": "T", "abstract": "A"}`:     "JSON lines",
		"Title\nAn abstract about café\xc3":   "plain text", // cut inside a character
		"Title\nAn abstract about café123":    "plain text",
		"标题\n关于图神经网络的摘要\xe5\x9b":              "plain text",
	} {
		if got := likelyFormat([]byte(head)); !strings.Contains(got, want) {
			t.Errorf("likelyFormat(%q) = %q, want it to say %q", head, got, want)
		}
	}
}
