package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/catalog/imports"
	"github.com/papersearch/papersearch/seeds/fetch/fetchtest"
)

// TestWatchCommandAndServe: a watch added on the command line to the data
// folder is run by the server on it, which stores what the source has;
// through the server, 'watch run' has it run again and ask only for the
// new, and 'watch rm' removes it.
func TestWatchCommandAndServe(t *testing.T) {
	setEnv(t)
	t.Setenv("PAPERSEARCH_SEED", "false")
	t.Setenv("PAPERSEARCH_MODEL", "all-MiniLM-L6-v2")
	t.Setenv("PAPERSEARCH_WATCH_TICK", "50ms")
	up := fetchtest.OpenReviewLive(t, "ICLR.cc/2027/Conference", 1000)
	up.Publish(3)
	t.Setenv("PAPERSEARCH_OPENREVIEW_URL", up.URL)
	ctx := context.Background()
	cli := func(args ...string) string {
		t.Helper()
		var out, errs bytes.Buffer
		if err := run(ctx, args, &out, &errs); err != nil {
			t.Fatalf("papersearch %s: %v\n%s", strings.Join(args, " "), err, errs.String())
		}
		return out.String()
	}
	var added wire.WatchesResponse
	if err := json.Unmarshal([]byte(cli("watch", "add", "openreview", "ICLR.cc/2027/Conference", "--tag", "watched", "--every", "6h", "--json")), &added); err != nil ||
		len(added.Watches) != 1 || added.Watches[0].Every != "6h" {
		t.Fatalf("watch add: %+v %v", added, err)
	}
	id := added.Watches[0].ID
	if list := cli("watch", "list"); !strings.Contains(list, id) || !strings.Contains(list, "never") {
		t.Errorf("watch list:\n%s", list)
	}
	if err := run(ctx, []string{"watch", "add", "bibtex", "x.bib"}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "source") {
		t.Errorf("watch add of a file source: %v", err)
	}

	url, logs, stop := startServe(t)
	defer stop()
	watch := func(runs int) wire.Watch {
		t.Helper()
		var w wire.Watch
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			resp, err := http.Get(url + "/v1/watches/" + id)
			if err != nil {
				t.Fatal(err)
			}
			json.NewDecoder(resp.Body).Decode(&w)
			resp.Body.Close()
			if w.Runs >= runs && !w.Running {
				break
			}
		}
		return w
	}
	if w := watch(1); w.Runs != 1 || w.LastAdded != 3 || w.Position != "3" {
		t.Fatalf("the server's first run: %+v\n%s", w, logs)
	}
	resp, err := http.Post(url+"/v1/search", "application/json", strings.NewReader(`{"query":"live problem","filters":{"tags":["watched"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	var res wire.SearchResponse
	json.NewDecoder(resp.Body).Decode(&res)
	resp.Body.Close()
	if len(res.Results) != 3 {
		t.Errorf("papers tagged by the watch: %+v", res.Results)
	}

	up.Publish(2)
	up.Asked()
	t.Setenv("PAPERSEARCH_SERVER", url)
	cli("watch", "run", id)
	if w := watch(2); w.Runs != 2 || w.LastAdded != 2 {
		t.Errorf("the run asked for: %+v", w)
	}
	if asked := up.Asked(); len(asked) != 1 || asked[0].Get("offset") != "3" {
		t.Errorf("the second run asked %v", asked)
	}
	if out := cli("watch", "rm", id); !strings.Contains(out, "removed") {
		t.Errorf("watch rm: %s", out)
	}
	if out := cli("watch", "list"); !strings.Contains(out, "no watches") {
		t.Errorf("after rm: %s", out)
	}
}

// TestWatchesMoveIntoTheStore: the watches an earlier version kept in the
// data folder's watches.db are the embedded store's after the next start
// (its file's watches table), and the old file is set aside.
func TestWatchesMoveIntoTheStore(t *testing.T) {
	dir := setEnv(t)
	ctx := context.Background()
	old := filepath.Join(dir, "watches.db")
	w, err := imports.OpenWatches(ctx, old, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Add(ctx, imports.WatchRequest{Source: "arxiv", Target: "cat:cs.LG"}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var out bytes.Buffer
	if err := run(ctx, []string{"watch", "list"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "cat:cs.LG") {
		t.Errorf("watch list after the move: %q", out.String())
	}
	if _, err := os.Stat(old + ".migrated"); err != nil {
		t.Errorf("watches.db not set aside: %v", err)
	}
	if n, err := imports.CopyWatches(ctx, old+".migrated", filepath.Join(dir, "papersearch.db")); err != nil || n != 0 {
		t.Errorf("the store's file holds the watch already: copying again copied %d (%v)", n, err)
	}
}
