package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search/qdrant"
	"github.com/papersearch/papersearch/seeds/fetch/fetchtest"
)

// TestRollingRestart: two servers are restarted one after the other, as a
// rolling update does (SIGTERM, then a new process: on Qdrant with a data
// folder of its own, as deploy/k8s runs them without a volume; embedded,
// on the same folder), while a client keeps posting papers through
// whichever answers and a watch's run is under way. Every acknowledged
// paper, the collection and its not-interested mark, the alert, the
// import job, the watch and a page cursor made before are answered by the
// new servers; the interrupted watch run is taken over and the watch runs
// once, never two runs at a time.
func TestRollingRestart(t *testing.T) {
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("embedded", func(t *testing.T) {
		dataDir := t.TempDir()
		rollingRestart(t, bin, func(extra ...string) []string {
			return crashEnv(t, dataDir, hashEndpoint(t), extra...)
		})
	})
	t.Run("qdrant", func(t *testing.T) {
		qurl := os.Getenv("PAPERSEARCH_TEST_QDRANT_URL")
		if qurl == "" {
			testenv.Missing(t, "PAPERSEARCH_TEST_QDRANT_URL is not set: start one with deploy/qdrant-local.sh up and export the URL it prints")
		}
		suffix := make([]byte, 4)
		rand.Read(suffix)
		coll := "rolling_" + hex.EncodeToString(suffix)
		t.Cleanup(func() {
			q := openCrashStore(t, t.TempDir(), qurl, coll)
			q.(*qdrant.Store).Drop(context.Background())
			q.Close()
		})
		embedURL := hashEndpoint(t)
		rollingRestart(t, bin, func(extra ...string) []string {
			return crashEnv(t, t.TempDir(), embedURL, append(extra, "PAPERSEARCH_QDRANT_URL="+qurl, "PAPERSEARCH_COLLECTION="+coll)...)
		})
	})
}

// rollingRestart runs TestRollingRestart on the servers env configures
// (its arguments added to each's environment).
func rollingRestart(t *testing.T, bin string, env func(extra ...string) []string) {
	up := fetchtest.OpenReviewLive(t, "ICLR.cc/2027/Conference", 1000)
	up.Publish(3)
	// The watch's first ask hangs until the process that made it goes
	// away; an ask while another is in flight would be a second run of
	// the watch at once.
	var inFlight, asks, overlapping atomic.Int32
	hung := make(chan struct{})
	up.Before(func(r *http.Request) {
		first := asks.Add(1) == 1
		if inFlight.Add(1) > 1 {
			overlapping.Add(1)
		}
		defer inFlight.Add(-1)
		if first {
			close(hung)
			<-r.Context().Done()
		}
	})
	start := func() *served {
		return serveProcess(t, bin, env("PAPERSEARCH_ADDR=127.0.0.1:0", "PAPERSEARCH_WATCH_TICK=100ms", "PAPERSEARCH_OPENREVIEW_URL="+up.URL))
	}
	servers := []*served{start(), start()}
	a := servers[0].URL
	call := func(method, url, body string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, out
	}
	must := func(want int, method, url, body string, into any) {
		t.Helper()
		code, out := call(method, url, body)
		if code != want {
			t.Fatalf("%s %s: %d %s", method, url, code, out)
		}
		if into != nil {
			if err := json.Unmarshal(out, into); err != nil {
				t.Fatalf("%s %s: %v in %s", method, url, err, out)
			}
		}
	}

	// What a client makes before the restart, all through the first server.
	must(200, "POST", a+"/v1/papers", `{"papers":[{"id":"q-1","title":"Quokka ecology","abstract":"Quokkas on Rottnest Island."},
		{"id":"q-2","title":"Quokka diet","abstract":"What quokkas eat."},{"id":"q-3","title":"Wombat burrows","abstract":"How wombats dig."}]}`, nil)
	must(200, "POST", a+"/v1/collections/reading/papers", `{"ids":["q-1"]}`, nil)
	must(200, "POST", a+"/v1/collections/reading/not-interested", `{"ids":["q-3"]}`, nil)
	var alert, job struct{ ID string }
	must(201, "POST", a+"/v1/alerts", `{"query":"quokka island ecology"}`, &alert)
	must(202, "POST", a+"/v1/imports", `{"source":"bibtex","content":"@article{platypus1, title={Platypus venom}, abstract={What the platypus spur delivers.}, author={Ada Lovelace}, year={2020}}"}`, &job)
	var watch wire.Watch
	must(201, "POST", a+"/v1/watches", `{"source":"openreview","target":"ICLR.cc/2027/Conference"}`, &watch)
	var page struct {
		NextCursor string `json:"next_cursor"`
	}
	must(200, "POST", a+"/v1/search", `{"query":"quokka","mode":"lexical","limit":1}`, &page)
	if page.NextCursor == "" {
		t.Fatal("no second page of two quokka papers")
	}
	select {
	case <-hung: // one of the servers runs the watch
	case <-time.After(20 * time.Second):
		t.Fatal("the watch did not run within 20 s")
	}

	// A client posts a paper at a time through the servers in turn while
	// they are restarted; those acknowledged must all be there after.
	var (
		mu      sync.Mutex
		acked   []string
		refused int
		retried atomic.Int32
	)
	urls := func() []string { // this write's first choice first
		mu.Lock()
		defer mu.Unlock()
		first := len(acked) % 2
		return []string{servers[first].URL, servers[1-first].URL}
	}
	stop := make(chan struct{})
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			id := fmt.Sprintf("roll-%d", i)
			body := fmt.Sprintf(`{"id":%q,"title":"Rolling paper %d","abstract":"Written while the servers restart: %s."}`, id, i, rollWord(i))
			// As a load balancer does, a write a stopping server refuses
			// goes to the other.
			ok := false
			for try, at := range urls() {
				resp, err := http.Post(at+"/v1/papers", "application/json", strings.NewReader(body))
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if ok = err == nil && resp.StatusCode == 200; ok {
					break
				}
				if try == 0 {
					retried.Add(1)
				}
			}
			mu.Lock()
			if ok {
				acked = append(acked, id)
			} else {
				refused++
			}
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	}()
	began := time.Now()
	var stopped []*served
	for i := range servers {
		time.Sleep(300 * time.Millisecond)
		servers[i].stop(t)
		stopped = append(stopped, servers[i])
		next := start()
		mu.Lock()
		servers[i] = next
		mu.Unlock()
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	<-wrote
	took := time.Since(began)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("first server:\n%s\nsecond server:\n%s", servers[0].logs, servers[1].logs)
			for i, s := range stopped {
				t.Logf("server %d, stopped:\n%s", i+1, s.logs)
			}
		}
	})
	a, b := servers[0].URL, servers[1].URL

	// The watch's run, interrupted with the server that ran it, is taken
	// over: one completed run that read the 3 papers.
	ran := func(base string, runs int) (w wire.Watch) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			must(200, "GET", base+"/v1/watches/"+watch.ID, "", &w)
			if w.Runs >= runs && !w.Running || time.Now().After(deadline) {
				return w
			}
		}
	}
	// A takeover run that the next restart interrupts after it stored its
	// batch (more than two asks of the source) leaves the papers stored
	// and the run that completes finds them there: it adds none of them.
	w := ran(b, 1)
	added := w.LastAdded == 3 || asks.Load() > 2 && w.LastAdded >= 0 && w.LastAdded <= 3
	if w.Runs != 1 || w.LastRead != 3 || !added || w.Position != "3" {
		t.Errorf("the watch after the restart: %+v (the source asked %d times); want one run that read 3 and added them", w, asks.Load())
	}
	for k := range 3 {
		if code, _ := call("GET", b+fmt.Sprintf("/v1/papers/openreview:live%04d", k), ""); code != 200 {
			t.Errorf("the watch's paper %d: %d", k, code)
		}
	}
	// Asked through the other new server, it runs again from where it was.
	up.Publish(2)
	up.Asked()
	must(202, "POST", a+"/v1/watches/"+watch.ID+"/run", "", nil)
	if w, asked := ran(a, 2), up.Asked(); w.Runs != 2 || w.LastAdded != 2 || len(asked) != 1 || asked[0].Get("offset") != "3" {
		t.Errorf("the run asked for after the restart: %+v, asked %v", w, asked)
	}

	// Every acknowledged paper, through both new servers.
	mu.Lock()
	defer mu.Unlock()
	lost := 0
	for _, id := range acked {
		for _, base := range []string{a, b} {
			if code, _ := call("GET", base+"/v1/papers/"+id, ""); code != 200 {
				lost++
				t.Errorf("acknowledged paper %s: %d through %s", id, code, base)
			}
		}
	}
	if len(acked) < 10 || refused > 0 {
		t.Errorf("%d papers acknowledged during the restart, %d refused by both servers", len(acked), refused)
	}
	last := acked[len(acked)-1]
	var i int
	fmt.Sscanf(last, "roll-%d", &i)
	for _, base := range []string{a, b} { // a write is searchable everywhere within 5 s
		var res wire.SearchResponse
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			must(200, "POST", base+"/v1/search", `{"query":"`+rollWord(i)+`","mode":"lexical"}`, &res)
			if len(res.Results) == 1 && res.Results[0].ID == last {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("the last acknowledged paper %s is not found by %s's search within 5 s: %+v", last, base, res.Results)
				break
			}
		}
	}
	// What was made before, through both.
	for _, base := range []string{a, b} {
		var coll wire.CollectionResponse
		must(200, "GET", base+"/v1/collections/reading/papers", "", &coll)
		if len(coll.Papers) != 1 || coll.Papers[0].ID != "q-1" || len(coll.NotInterested) != 1 || coll.NotInterested[0].ID != "q-3" {
			t.Errorf("the collection through %s: %+v", base, coll)
		}
		must(200, "GET", base+"/v1/alerts/"+alert.ID, "", nil)
		must(200, "GET", base+"/v1/alerts/"+alert.ID+"/feed.atom", "", nil)
		var j wire.ImportJob
		must(200, "GET", base+"/v1/imports/"+job.ID, "", &j)
		if j.Status != "done" {
			t.Errorf("the import through %s: %+v", base, j)
		}
		must(200, "GET", base+"/v1/papers/bibtex:platypus1", "", nil)
		must(200, "POST", base+"/v1/search", `{"query":"quokka","mode":"lexical","limit":1,"cursor":"`+page.NextCursor+`"}`, nil)
	}
	// At least the interrupted run, its takeover and the run asked for;
	// more when a takeover was itself under way as its server stopped.
	if n := overlapping.Load(); n != 0 || asks.Load() < 3 {
		t.Errorf("the upstream was asked %d times, %d while another ask was in flight; want 3 or more (the interrupted run, its takeover, the run asked for), none at once", asks.Load(), n)
	}
	t.Logf("reliability: rolling restart of 2 instances in %v: %d papers written, %d acknowledged (%d sent again to the other server), %d lost; the watch's interrupted run taken over, duplicated runs %d",
		took.Round(time.Millisecond), len(acked)+refused, len(acked), retried.Load(), lost, overlapping.Load())
}

// rollWord is a word for i found in no other paper of rollingRestart's.
func rollWord(i int) string {
	w := []byte("quoll")
	for ; i > 0; i /= 26 {
		w = append(w, byte('a'+i%26))
	}
	return string(w) + "x" // no stemmer shortens it
}
