package api

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/atlas/corpusmap"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/seeds"
)

// waitForMap waits until the server at url serves its map.
func waitForMap(t *testing.T, url string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		resp, b := do(t, "GET", url+"/v1/map?titles=false", "", "")
		if resp.StatusCode == 200 {
			return
		}
		if resp.StatusCode != 503 || time.Now().After(deadline) {
			t.Fatalf("GET /v1/map: %d %s", resp.StatusCode, b)
		}
	}
}

// TestMapRoute: before its first map the server answers 503 with
// Retry-After and how far the map is; then every paper with its place
// (integers within the scale), title and cluster at the level asked, each
// level's clusters named, and a search's results and a collection's papers
// lit up; bad parameters are named.
func TestMapRoute(t *testing.T) {
	ctx := context.Background()
	eng, _ := emptyEngine(t)
	papers, err := seeds.NeurIPS2026()
	if err != nil {
		t.Fatal(err)
	}
	papers = papers[:min(30, len(papers))]
	papers[0].Tags, papers[1].Tags = []string{"mine"}, []string{"mine"}
	if _, err := catalog.New(eng, catalog.Options{}).Ingest(ctx, papers, nil); err != nil {
		t.Fatal(err)
	}
	index, err := eng.Index(ctx) // the seed corpus repeats some papers
	if err != nil {
		t.Fatal(err)
	}
	n := index.Papers
	keeper := corpusmap.New(eng, nil)
	srv := httptest.NewServer(New(eng, catalog.New(eng, catalog.Options{}), Options{Map: keeper}))
	defer srv.Close()
	resp, b := do(t, "GET", srv.URL+"/v1/map", "", "")
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "map-not-ready") {
		t.Fatalf("before the first map: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	mapping, stop := context.WithCancel(ctx)
	defer stop()
	go keeper.Keep(mapping, 10*time.Millisecond)
	waitForMap(t, srv.URL)
	var m wire.MapResponse
	if _, b := do(t, "GET", srv.URL+"/v1/map?level=0&collection=mine", "", ""); json.Unmarshal(b, &m) != nil {
		t.Fatalf("not a map: %s", b)
	}
	if len(m.IDs) != n || len(m.X) != n || len(m.Titles) != n || len(m.Cluster) != n || m.Scale != wire.MapScale || len(m.Levels) == 0 {
		t.Fatalf("map: %d ids, %d titles, %d levels", len(m.IDs), len(m.Titles), len(m.Levels))
	}
	for i := range m.IDs {
		if m.X[i] < 0 || m.X[i] > m.Scale || m.Y[i] < 0 || m.Y[i] > m.Scale || m.Cluster[i] < 0 || m.Cluster[i] >= len(m.Levels[0]) || m.Titles[i] == "" {
			t.Errorf("paper %d %s: (%d, %d) cluster %d %q", i, m.IDs[i], m.X[i], m.Y[i], m.Cluster[i], m.Titles[i])
		}
	}
	for l, clusters := range m.Levels {
		for _, c := range clusters {
			if c.Label == "" || len(c.Central) == 0 || (l == 0) != (c.Parent == -1) {
				t.Errorf("level %d cluster %+v", l, c)
			}
		}
	}
	lit := map[string]bool{}
	for _, i := range m.Highlight {
		lit[m.IDs[i]] = true
	}
	if len(lit) != 2 || !lit[papers[0].ID] || !lit[papers[1].ID] {
		t.Errorf("the collection lit up %v", lit)
	}
	// Compressed for a client that accepts it (Go's does, and undoes it).
	if resp, b := do(t, "GET", srv.URL+"/v1/map", "", "", "Accept-Encoding", "gzip"); resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" || len(b) == 0 {
		t.Errorf("the map asked for gzip: %d %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	for _, tt := range []struct{ path, want string }{
		{"/v1/map?level=3", `"level"`},
		{"/v1/map?q=%20", `"q"`},
		{"/v1/map?q=", `"q"`},
		{"/v1/map?q=%00", `"parameter":"q","detail":"must hold some text, not only spaces, control and invisible characters"`},
		{"/v1/map?q=%ff", `"parameter":"q","detail":"must be valid UTF-8"`},
		{"/v1/map?collection=has%20space", `"collection"`},
		{"/v1/map?titles=maybe", `"titles"`},
		{"/v1/map?colour=red", `"colour"`},
		{"/v1/map?year_min=x", `"year_min"`},
	} {
		resp, b := do(t, "GET", srv.URL+tt.path, "", "")
		if resp.StatusCode != 400 || !strings.Contains(string(b), tt.want) {
			t.Errorf("GET %s: %d %s; want a problem naming %s", tt.path, resp.StatusCode, b, tt.want)
		}
	}
}

// TestMapWithoutKeeper: a server given no map answers 501 with a problem.
func TestMapWithoutKeeper(t *testing.T) {
	srv := httptest.NewServer(New(echoEngine{}, echoEngine{}, Options{}))
	defer srv.Close()
	resp, b := do(t, "GET", srv.URL+"/v1/map", "", "")
	if resp.StatusCode != 501 || resp.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(string(b), "map-unavailable") {
		t.Errorf("the map of a server without one: %d %s", resp.StatusCode, b)
	}
}
