package corpusmap

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/papersearch/papersearch/atlas"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/storage"
)

// Limits of a map.
const (
	// Neighbours is how many neighbours of each paper its layout keeps
	// near (UMAP's n_neighbors).
	Neighbours = 15
	// TopicTerms is how many terms name a topic; Central how many
	// of its most central papers are listed.
	TopicTerms = 5
	Central    = 3
	// Levels is the most levels of clusters a map has (atlas.LevelSizes).
	Levels = 3
	// scrollPage is how many papers a map reads from the store at once.
	scrollPage = 1000
)

// Map is a map of the stored papers: each one's place in the unit
// square and its cluster at each level, and each cluster's topic.
type Map struct {
	// Built is when the map was made, Took how long it took.
	Built time.Time
	Took  time.Duration
	// IDs are the papers mapped, by position; Points their places, in
	// [0, 1]².
	IDs    []string
	Titles []string
	Points [][2]float32
	// Clusters are the clusters of each level, coarsest first; Of[l][i] is
	// paper i's cluster at level l.
	Of       [][]int
	Clusters [][]Cluster
	index    map[string]int
}

// Cluster is one cluster of a map's level.
type Cluster struct {
	// Parent is the cluster of the level above holding it (-1 at the top).
	Parent int
	// Size is how many papers it holds; Centre their mean place.
	Size   int
	Centre [2]float32
	// Terms name it, most distinctive first; Central are its papers
	// nearest its centroid in meaning, most central first.
	Terms   []string
	Central []string
}

// Label is the cluster's name: its first three terms.
func (c Cluster) Label() string { return strings.Join(c.Terms[:min(3, len(c.Terms))], ", ") }

// Position is the index of paper id in the map, false if it is not in it.
func (m *Map) Position(id string) (int, bool) {
	i, ok := m.index[id]
	return i, ok
}

// Step is a stage of making a map, reported with its progress.
type Step = string

// Options are the variants of a map that eval measures against each
// other; the zero value is the map served.
type Options struct {
	// PCAOnly places the papers by their first two principal components
	// alone, the layout's starting point (a baseline).
	PCAOnly bool
}

// Build lays out every stored paper (package atlas): its neighbours in
// the core models' vectors, a UMAP-style layout of them, nested clusters
// at atlas.LevelSizes and each named by its distinctive terms. progress,
// if not nil, is told each stage and how far it is.
func Build(ctx context.Context, e *search.Engine, opts Options, progress func(step Step, done, total int)) (*Map, error) {
	if progress == nil {
		progress = func(Step, int, int) {}
	}
	start := time.Now()
	total, err := e.Store().Count(ctx)
	if err != nil {
		return nil, err
	}
	var (
		ids, titles []string
		vecs        [][]float32
		texts       []string
	)
	for cursor := ""; ; {
		progress("reading papers", len(ids), total)
		docs, next, err := e.Store().Scroll(ctx, cursor, scrollPage)
		if err != nil {
			return nil, fmt.Errorf("map: read the papers: %w", err)
		}
		for _, d := range docs {
			v := e.CoreVector(d.Vector)
			ids, titles, vecs, texts = append(ids, d.Paper.ID), append(titles, d.Paper.Title), append(vecs, v), append(texts, d.Paper.Text())
		}
		if next == "" {
			break
		}
		cursor = next
	}
	// In id order, so that the map is the same whichever order the store
	// reads in (a layout's random draws follow the order).
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(ids[a], ids[b]) })
	ids, titles, vecs, texts = permute(ids, order), permute(titles, order), permute(vecs, order), permute(texts, order)
	n := len(ids)
	if n < 2 {
		return nil, fmt.Errorf("map: %w", atlas.ErrTooFew)
	}
	graph, err := atlas.Neighbours(ctx, vecs, Neighbours, func(rows int) { progress("finding neighbours", rows, n) })
	if err != nil {
		return nil, fmt.Errorf("map: %w", err)
	}
	points, err := atlas.Layout(ctx, vecs, graph, atlas.LayoutOptions{Seed: 1, PCAOnly: opts.PCAOnly}, func(s atlas.Step, done, total int) { progress(string(s), done, total) })
	if err != nil {
		return nil, fmt.Errorf("map: %w", err)
	}
	progress("clustering", 0, 1)
	sizes := atlas.LevelSizes(n)
	h, err := atlas.Cluster(ctx, vecs, sizes, 1)
	if err != nil {
		return nil, fmt.Errorf("map: %w", err)
	}
	progress("naming topics", 0, 1)
	topics := atlas.Label(texts, h, TopicTerms)
	m := &Map{Built: time.Now(), IDs: ids, Titles: titles, Points: points, Of: h.Of, index: make(map[string]int, n)}
	for i, id := range ids {
		m.index[id] = i
	}
	for l, of := range h.Of {
		k := slices.Max(of) + 1
		clusters := make([]Cluster, k)
		members := make([][]int, k)
		for i, c := range of {
			members[c] = append(members[c], i)
		}
		for c := range clusters {
			mc := Cluster{Parent: -1, Size: len(members[c]), Terms: topics[l][c].Terms, Central: centralOf(members[c], vecs, ids)}
			if l > 0 {
				mc.Parent = h.Parent[l][c]
			}
			for _, i := range members[c] {
				mc.Centre[0] += points[i][0] / float32(len(members[c]))
				mc.Centre[1] += points[i][1] / float32(len(members[c]))
			}
			clusters[c] = mc
		}
		m.Clusters = append(m.Clusters, clusters)
	}
	m.Took = time.Since(start)
	return m, nil
}

// permute is xs in the order of the indices order.
func permute[T any](xs []T, order []int) []T {
	out := make([]T, len(order))
	for i, j := range order {
		out[i] = xs[j]
	}
	return out
}

// centralOf is the ids of the Central members nearest their centroid.
func centralOf(members []int, vecs [][]float32, ids []string) []string {
	if len(members) == 0 {
		return nil
	}
	centroid := make([]float32, len(vecs[members[0]]))
	for _, i := range members {
		for d, x := range vecs[i] {
			centroid[d] += x
		}
	}
	type scored struct {
		i   int
		sim float32
	}
	ranked := make([]scored, len(members))
	for j, i := range members {
		ranked[j] = scored{i, embed.Dot(vecs[i], centroid)}
	}
	slices.SortFunc(ranked, func(a, b scored) int { return cmp.Or(cmp.Compare(b.sim, a.sim), cmp.Compare(a.i, b.i)) })
	out := make([]string, 0, Central)
	for _, r := range ranked[:min(Central, len(ranked))] {
		out = append(out, ids[r.i])
	}
	return out
}

// Vectors are the vectors a map was laid out from (the core models'
// view of each stored vector, unit length), by the map's positions.
func Vectors(ctx context.Context, e *search.Engine, m *Map) ([][]float32, error) {
	stored, err := e.Store().Vectors(ctx, m.IDs)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(m.IDs))
	for i, id := range m.IDs {
		v, ok := stored[id]
		if !ok {
			return nil, fmt.Errorf("map: paper %s: %w", id, storage.ErrNotFound)
		}
		out[i] = e.CoreVector(v)
	}
	return out, nil
}
