package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api"
	"github.com/papersearch/papersearch/api/alerts"
	"github.com/papersearch/papersearch/api/client"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/atlas/corpusmap"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/catalog/imports"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/searchtest"
	"github.com/papersearch/papersearch/seeds/csl"
)

// TestClient runs every call against a real server on loopback.
func TestClient(t *testing.T) {
	ctx := context.Background()
	model, err := embed.NewLocal(embed.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eng, store := searchtest.Engine(t, model, search.Options{})
	importer := func(_ context.Context, req imports.Request) (imports.Opened, error) {
		return imports.Opened{Source: csl.NewReader(req.File), Tags: req.Tags}, nil
	}
	keeper := corpusmap.New(eng, nil)
	h := api.New(eng, catalog.New(eng, catalog.Options{}), api.Options{APIKey: "k", Importer: importer, Alerts: alerts.New(store), Map: keeper})
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	c, err := client.New(srv.URL, "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	papers := []papersearch.Paper{
		{ID: "a", Title: "Graph networks for molecules", Abstract: "Message passing predicts molecular properties.", Venue: "ICML", Year: 2020},
		{ID: "b", Title: "Protein folding", Abstract: "Deep networks fold amino acid sequences.", Venue: "NeurIPS", Year: 2021},
		{ID: "c", Title: "Speech recognition", Abstract: "Transformers transcribe spoken audio.", Venue: "ICML", Year: 2022},
	}
	ir, err := c.Ingest(ctx, papers)
	if err != nil || ir.New != 3 {
		t.Fatalf("ingest: %+v %v", ir, err)
	}
	// The map: 503 with Retry-After until the engine lays it out, then
	// every paper, the protein paper lit up by a search.
	var problem *wire.Problem
	if _, err := c.Map(ctx, client.MapParams{}); !errors.As(err, &problem) || problem.Status != 503 || problem.RetryAfter == 0 {
		t.Errorf("the map before its layout: %v", err)
	}
	mapping, stop := context.WithCancel(ctx)
	defer stop()
	go keeper.Keep(mapping, 10*time.Millisecond)
	var m wire.MapResponse
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if m, err = c.Map(ctx, client.MapParams{Highlight: "how do proteins fold", Level: ptr(0), Filter: papersearch.Filter{YearMin: 2021}}); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || len(m.IDs) != 2 || len(m.Titles) != 2 || m.Level != 0 || len(m.Highlight) == 0 || m.IDs[m.Highlight[0]] != "b" {
		t.Errorf("the map: %+v %v", m, err)
	}
	res, err := c.Search(ctx, wire.SearchRequest{Query: "how do proteins fold", Limit: ptr(2)})
	if err != nil || len(res.Results) != 2 || res.Results[0].ID != "b" {
		t.Fatalf("search: %+v %v", res, err)
	}
	sim, err := c.Similar(ctx, "a", client.SimilarParams{Limit: 5, Filter: papersearch.Filter{Venues: []string{"ICML"}}, Explain: true})
	if err != nil || len(sim.Results) != 1 || sim.Results[0].ID != "c" || sim.Results[0].Explanation == nil {
		t.Fatalf("similar: %+v %v", sim, err)
	}
	// By a chosen sentence (each abstract here is one), explained by the pair.
	sim, err = c.Similar(ctx, "a", client.SimilarParams{Sentences: []int{0}, Explain: true})
	if err != nil || len(sim.Results) != 2 || sim.Results[0].Explanation.SentenceMatch == nil ||
		sim.Results[0].Explanation.SentenceMatch.Query.Text != "Message passing predicts molecular properties." {
		t.Fatalf("similar by sentence 0: %+v %v", sim, err)
	}
	if p, err := c.Get(ctx, "b"); err != nil || p.Title != "Protein folding" {
		t.Fatalf("get: %+v %v", p, err)
	}
	if err := c.Delete(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	var prob *wire.Problem
	if _, err := c.Get(ctx, "c"); !errors.As(err, &prob) || prob.Status != http.StatusNotFound {
		t.Errorf("get deleted: %v", err)
	}
	if _, err := c.Search(ctx, wire.SearchRequest{Query: "x", Limit: ptr(500)}); !errors.As(err, &prob) || prob.Status != 400 || len(prob.Errors) == 0 {
		t.Errorf("bad limit: %v", err)
	}
	job, err := c.StartImport(ctx, wire.ImportRequest{Source: "csl", Tags: []string{"lib"},
		Content: `[{"id":"x1","title":"Sparse experts","abstract":"Routing tokens to experts."}]`})
	if err != nil || job.Status != "running" {
		t.Fatalf("start import: %+v %v", job, err)
	}
	for job.Status == "running" {
		if job, err = c.Import(ctx, job.ID); err != nil {
			t.Fatal(err)
		}
	}
	if job.Status != "done" || job.Stored != 1 {
		t.Errorf("import: %+v", job)
	}
	if sim, err := c.Similar(ctx, "a", client.SimilarParams{Filter: papersearch.Filter{Tags: []string{"lib"}, Since: "1900-01-01", By: papersearch.ByAdded}}); err != nil || len(sim.Results) != 1 || sim.Results[0].ID != "csl:x1" {
		t.Errorf("similar within the imported tag: %+v %v", sim, err)
	}
	// A collection: papers added, one marked not interested; its
	// recommendations, each naming its nearest member.
	if ch, err := c.AddToCollection(ctx, "Reading", []string{"a", "b"}); err != nil || ch.Tag != "reading" || len(ch.Updated) != 2 {
		t.Fatalf("add to a collection: %+v %v", ch, err)
	}
	if _, err := c.MarkNotInterested(ctx, "reading", []string{"b"}); err != nil {
		t.Fatal(err)
	}
	if cs, err := c.Collections(ctx); err != nil || !slices.ContainsFunc(cs.Collections, func(c papersearch.Collection) bool {
		return c.Tag == "reading" && c.Papers == 1 && c.NotInterested == 1
	}) {
		t.Errorf("collections: %+v %v", cs, err)
	}
	if col, err := c.Collection(ctx, "reading"); err != nil || len(col.Papers) != 1 || col.Papers[0].ID != "a" || len(col.NotInterested) != 1 {
		t.Errorf("collection: %+v %v", col, err)
	}
	// c was deleted above: the one paper left outside is the import's.
	rec, err := c.Recommend(ctx, "reading", client.RecommendParams{Limit: 5, Method: "centroid", Filter: papersearch.Filter{Tags: []string{"lib"}}})
	if err != nil || len(rec.Results) != 1 || rec.Results[0].ID != "csl:x1" || len(rec.Results[0].Because) != 1 || rec.Results[0].Because[0].ID != "a" {
		t.Errorf("recommend: %+v %v", rec, err)
	}
	// Its feed, and a saved search's: Atom at the URLs the client gives.
	for _, u := range []string{c.CollectionFeedURL("reading", client.FeedParams{Window: "2w", Limit: 5, Filter: papersearch.Filter{Tags: []string{"lib"}}})} {
		if resp, err := http.Get(u); err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != api.MediaAtom+"; charset=utf-8" {
			t.Errorf("GET %s: %v %v", u, resp, err)
		}
	}
	alert, err := c.CreateAlert(ctx, wire.AlertRequest{Query: "proteins", Window: ptr("36h"), Limit: ptr(3)})
	if err != nil || alert.FeedURL == "" || alert.Window != "36h" {
		t.Fatalf("create an alert: %+v %v", alert, err)
	}
	if resp, err := http.Get(alert.FeedURL); err != nil || resp.StatusCode != 200 {
		t.Errorf("the alert's feed: %v %v", resp, err)
	}
	if list, err := c.Alerts(ctx); err != nil || len(list.Alerts) != 1 || list.Alerts[0].ID != alert.ID {
		t.Errorf("alerts: %+v %v", list, err)
	}
	if err := c.DeleteAlert(ctx, alert.ID); err != nil {
		t.Error(err)
	}
	if err := c.DeleteAlert(ctx, alert.ID); !errors.As(err, &prob) || prob.Status != 404 {
		t.Errorf("delete a deleted alert: %v", err)
	}
	if _, err := c.UnmarkNotInterested(ctx, "reading", "b"); err != nil {
		t.Error(err)
	}
	if ch, err := c.RemoveFromCollection(ctx, "reading", "a"); err != nil || len(ch.Updated) != 1 {
		t.Errorf("remove from a collection: %+v %v", ch, err)
	}
	if _, err := c.Recommend(ctx, "reading", client.RecommendParams{}); !errors.As(err, &prob) || prob.Status != 404 {
		t.Errorf("recommend for an emptied collection: %v", err)
	}
	noKey, _ := client.New(srv.URL, "", nil)
	if _, err := noKey.StartImport(ctx, wire.ImportRequest{Source: "csl", Content: "[]"}); !errors.As(err, &prob) || prob.Status != 401 {
		t.Errorf("import without key: %v", err)
	}
	if _, err := noKey.Ingest(ctx, papers[:1]); !errors.As(err, &prob) || prob.Status != 401 {
		t.Errorf("ingest without key: %v", err)
	}
	if _, err := client.New("localhost:8080", "", nil); err == nil {
		t.Error("a URL without scheme was accepted")
	}
}

func ptr[T any](v T) *T { return &v }

// TestDependencies: a program using the client builds in net/http and the
// API's types, not the server, the stores, gRPC or the models.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"sqlite", "qdrant", "grpc", "/embed", "/search", "papersearch/api", "echo"} {
			if strings.Contains(dep, banned) && dep != "github.com/papersearch/papersearch/api/wire" &&
				dep != "github.com/papersearch/papersearch/api/client" {
				t.Errorf("the client depends on %s", dep)
			}
		}
	}
}
