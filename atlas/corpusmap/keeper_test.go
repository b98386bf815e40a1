package corpusmap_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/atlas/corpusmap"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/search/searchtest"
)

// readyMap waits for k's first map and returns its view.
func readyMap(t *testing.T, k *corpusmap.Keeper, q corpusmap.Query) corpusmap.View {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		view, err := k.Map(context.Background(), q)
		if err == nil {
			return view
		}
		if !errors.Is(err, corpusmap.ErrNotReady) || time.Now().After(deadline) {
			t.Fatalf("map: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMap: the map is made in the background (until then Map says how
// far it is), puts papers of one topic in one cluster, keeps to a filter,
// lights up a search's results and a collection's papers, places a paper
// written since among its topic and drops a deleted one.
func TestMap(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	eng := searchtest.TopicEngine(t) // 6 topics of 12 papers; "lib" holds 8
	k := corpusmap.New(eng, nil)
	if _, err := k.Map(ctx, corpusmap.Query{}); !errors.Is(err, corpusmap.ErrNotReady) {
		t.Fatalf("before the first map: %v", err)
	}
	go k.Keep(ctx, 10*time.Millisecond)
	view := readyMap(t, k, corpusmap.Query{})
	if len(view.Points) != 72 || len(view.Clusters) != 2 || len(view.Clusters[1]) != 8 {
		t.Fatalf("%d points, %d levels", len(view.Points), len(view.Clusters))
	}
	topicOf := func(id string) string { return strings.Split(id, "-")[0] }
	byCluster := map[int]map[string]int{}
	for _, p := range view.Points {
		if p.Point[0] < 0 || p.Point[0] > 1 || p.Point[1] < 0 || p.Point[1] > 1 || p.Title == "" || p.Placed {
			t.Errorf("point %+v", p)
		}
		if byCluster[p.Finest] == nil {
			byCluster[p.Finest] = map[string]int{}
		}
		byCluster[p.Finest][topicOf(p.ID)]++
	}
	for c, topics := range byCluster {
		if len(topics) != 1 {
			t.Errorf("cluster %d mixes topics: %v", c, topics)
		}
	}
	for _, c := range view.Clusters[1] {
		if c.Parent < 0 || c.Parent >= len(view.Clusters[0]) || len(c.Central) == 0 {
			t.Errorf("cluster %+v", c)
		}
	}
	recent := readyMap(t, k, corpusmap.Query{Filter: papersearch.Filter{YearMin: 2022}})
	if len(recent.Points) != 24 {
		t.Errorf("papers of 2022: %d, want 24", len(recent.Points))
	}
	lit := readyMap(t, k, corpusmap.Query{HighlightTag: "lib"})
	if len(lit.Highlight) != 8 {
		t.Errorf("the collection lit up %d papers, want 8", len(lit.Highlight))
	}
	if lit := readyMap(t, k, corpusmap.Query{Highlight: "topic 3: paper 1"}); len(lit.Highlight) == 0 {
		t.Error("a search lit up nothing")
	}
	// A paper written since is placed among its topic; a deleted one goes.
	if _, err := catalog.New(eng, catalog.Options{}).Put(ctx, []papersearch.Paper{searchtest.TopicPaper(2, 50)}); err != nil {
		t.Fatal(err)
	}
	if err := catalog.New(eng, catalog.Options{}).Delete(ctx, "t5-0"); err != nil {
		t.Fatal(err)
	}
	after := readyMap(t, k, corpusmap.Query{})
	finestOf := map[string]int{}
	var placed *corpusmap.Point
	for i, p := range after.Points {
		finestOf[p.ID] = p.Finest
		if p.ID == "t2-50" {
			placed = &after.Points[i]
		}
	}
	if _, ok := finestOf["t5-0"]; ok || len(after.Points) != 72 {
		t.Errorf("after a delete and an add: %d points, t5-0 there: %v", len(after.Points), ok)
	}
	if placed == nil || !placed.Placed || placed.Finest != finestOf["t2-1"] {
		t.Errorf("the new paper: %+v, want it placed in topic 2's cluster %d", placed, finestOf["t2-1"])
	}
}
