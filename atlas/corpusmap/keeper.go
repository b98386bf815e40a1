package corpusmap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/storage"
)

// A map is remade once this many papers have changed since it was made,
// or this share of those it holds, whichever is more.
const (
	remakeMin   = 100
	remakeShare = 0.05
)

// ErrNotReady wraps the error of a map asked for before the first one
// is made; Progress says how far that is.
var ErrNotReady = errors.New("the map is being made")

// Progress is how far the making of a map is.
type Progress struct {
	Step        Step
	Done, Total int
}

func (p Progress) Error() string {
	return fmt.Sprintf("%s: %s, %d of %d", ErrNotReady, p.Step, p.Done, p.Total)
}

func (p Progress) Unwrap() error { return ErrNotReady }

// Keeper keeps the map of the papers an engine answers from: it makes
// the map (Keep), remakes it once enough papers have changed, and serves
// it (Map) with the papers written since placed among their nearest.
type Keeper struct {
	eng *search.Engine
	log *slog.Logger

	// mu guards the map being served, how far the next one is, and where
	// the papers written since it was made were placed.
	mu       sync.Mutex
	current  *Map
	progress Progress
	building bool
	lastErr  error
	placed   map[string]placement
}

// placement is where a paper written after its map was made sits: among
// its nearest mapped papers.
type placement struct {
	mark   uint64 // the write it was placed after
	point  [2]float32
	finest int
	title  string
	// mapped is true for a paper the map holds, rewritten since (a new
	// title, say): it keeps its place.
	mapped bool
}

// New returns a Keeper of the map of the papers eng answers from, logging
// to log (nil: nowhere); it makes none until Keep runs.
func New(eng *search.Engine, log *slog.Logger) *Keeper {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Keeper{eng: eng, log: log}
}

// Keep makes the map of the corpus and remakes it once enough papers
// have changed (remakeMin, remakeShare), looking every tick, until
// ctx ends. Each making is logged with its time.
func (k *Keeper) Keep(ctx context.Context, tick time.Duration) {
	for {
		if due, err := k.due(ctx); err != nil {
			k.log.Warn("map: could not tell whether it is due", "error", err)
		} else if due {
			k.remake(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(tick):
		}
	}
}

// mapDue reports whether the map should be made now.
func (k *Keeper) due(ctx context.Context) (bool, error) {
	changed, deleted := k.eng.Changes().Since()
	k.mu.Lock()
	current := k.current
	k.mu.Unlock()
	if current != nil {
		return float64(len(changed)+len(deleted)) >= max(remakeMin, remakeShare*float64(len(current.IDs))), nil
	}
	n, err := k.eng.Store().Count(ctx)
	return n >= 2, err
}

// remakeMap makes the map now and serves it.
func (k *Keeper) remake(ctx context.Context) {
	mark := k.eng.Changes().Mark()
	k.mu.Lock()
	k.building, k.progress = true, Progress{Step: "starting"}
	k.mu.Unlock()
	m, err := Build(ctx, k.eng, Options{}, func(step Step, done, total int) {
		k.mu.Lock()
		k.progress = Progress{Step: step, Done: done, Total: total}
		k.mu.Unlock()
	})
	k.mu.Lock()
	defer k.mu.Unlock()
	k.building, k.lastErr = false, err
	if err != nil {
		if ctx.Err() == nil {
			k.log.Error("map: making it failed", "error", err)
		}
		return
	}
	k.eng.Changes().Forget(mark)
	k.current, k.placed = m, map[string]placement{}
	k.log.Info("map made", "papers", len(m.IDs), "levels", len(m.Clusters), "took", m.Took.Round(time.Millisecond))
}

// Query asks for the map of the papers within Filter, with the results
// of a search for Highlight and the papers of the collection HighlightTag
// (each when not empty) lit up.
type Query struct {
	Filter       papersearch.Filter
	Highlight    string
	HighlightTag string
}

// View is the map as served: the clusters of every level and the
// papers within the query's filter, papers written since the map was made
// placed among their nearest.
type View struct {
	Built     time.Time
	Clusters  [][]Cluster
	Points    []Point
	Highlight []string
}

// Point is one paper on the map: its place in [0, 1]², its cluster at
// the finest level (the coarser ones are its parents) and its title.
type Point struct {
	ID     string
	Title  string
	Point  [2]float32
	Finest int
	// Placed is true for a paper written since the map was made, put
	// among its nearest mapped papers until the map is remade.
	Placed bool
}

// Map returns the map of the corpus as q asks. Before the first map is
// made it is an error wrapping ErrNotReady (a Progress); a corpus of
// fewer than two papers has an empty map.
func (k *Keeper) Map(ctx context.Context, q Query) (View, error) {
	defer k.eng.Embedding().Foreground()()
	if err := search.ValidateFilter(q.Filter); err != nil {
		return View{}, err
	}
	k.mu.Lock()
	current, progress, building := k.current, k.progress, k.building
	k.mu.Unlock()
	if current == nil {
		if n, err := k.eng.Store().Count(ctx); err != nil || n < 2 && !building {
			return View{Clusters: [][]Cluster{}, Points: []Point{}, Highlight: []string{}}, err
		}
		return View{}, progress
	}
	placed, deleted, err := k.placeWritten(ctx, current)
	if err != nil {
		return View{}, err
	}
	var allowed map[string]bool
	if !storage.FieldsFree(q.Filter) || len(q.Filter.Only) > 0 || len(q.Filter.Exclude) > 0 {
		if allowed, err = k.allowedIDs(ctx, q.Filter); err != nil {
			return View{}, err
		}
	}
	view := View{Built: current.Built, Clusters: current.Clusters, Points: make([]Point, 0, len(current.IDs)+len(placed))}
	finest := current.Of[len(current.Of)-1]
	for i, id := range current.IDs {
		if _, gone := deleted[id]; gone || allowed != nil && !allowed[id] {
			continue
		}
		if _, moved := placed[id]; moved {
			continue
		}
		view.Points = append(view.Points, Point{ID: id, Title: current.Titles[i], Point: current.Points[i], Finest: finest[i]})
	}
	for _, id := range slices.Sorted(maps.Keys(placed)) {
		if allowed != nil && !allowed[id] {
			continue
		}
		p := placed[id]
		view.Points = append(view.Points, Point{ID: id, Title: p.title, Point: p.point, Finest: p.finest, Placed: !p.mapped})
	}
	if view.Highlight, err = k.highlighted(ctx, q); err != nil {
		return View{}, err
	}
	return view, nil
}

// allowedIDs is the ids of the papers f allows, as the store filters them
// (one dense retrieval of every paper, whatever it ranks by).
func (k *Keeper) allowedIDs(ctx context.Context, f papersearch.Filter) (map[string]bool, error) {
	n, err := k.eng.Store().Count(ctx)
	if err != nil || n == 0 {
		return map[string]bool{}, err
	}
	probe := make([]float32, k.eng.Store().Model().Dim)
	probe[0] = 1
	found, err := k.eng.Store().Nearest(ctx, probe, n, f)
	if err != nil {
		return nil, fmt.Errorf("map: filter: %w", err)
	}
	out := make(map[string]bool, len(found))
	for _, c := range found {
		out[c.ID] = true
	}
	return out, nil
}

// highlighted is the ids a map view lights up: a search's results and a
// collection's papers.
func (k *Keeper) highlighted(ctx context.Context, q Query) ([]string, error) {
	out := []string{}
	if q.Highlight != "" {
		res, err := k.eng.Search(ctx, search.Query{Text: q.Highlight, Limit: search.MaxLimit, Filter: q.Filter})
		if err != nil {
			return nil, err
		}
		for _, h := range res.Hits {
			out = append(out, h.ID)
		}
	}
	if q.HighlightTag != "" {
		papers, err := k.eng.CollectionPapers(ctx, q.HighlightTag)
		if err != nil {
			return nil, err
		}
		for _, p := range papers {
			if !slices.Contains(out, p.ID) {
				out = append(out, p.ID)
			}
		}
	}
	return out, nil
}

// placeWritten places the papers written since m was made among their
// nearest mapped papers (each once per write, kept in the state), and
// returns them and the ids deleted since.
func (k *Keeper) placeWritten(ctx context.Context, m *Map) (map[string]placement, map[string]uint64, error) {
	changed, deleted := k.eng.Changes().Since()
	k.mu.Lock()
	out := make(map[string]placement, len(changed))
	var todo []string
	for id, mark := range changed {
		if p, ok := k.placed[id]; ok && p.mark == mark {
			out[id] = p
		} else {
			todo = append(todo, id)
		}
	}
	k.mu.Unlock()
	if len(todo) == 0 {
		return out, deleted, nil
	}
	slices.Sort(todo)
	vecs, err := k.eng.Store().Vectors(ctx, todo)
	if err != nil {
		return nil, nil, err
	}
	papers, err := k.eng.Store().Lookup(ctx, todo)
	if err != nil {
		return nil, nil, err
	}
	var ids, rewritten []string
	var queries [][]float32
	for _, id := range todo {
		if _, ok := m.index[id]; ok {
			rewritten = append(rewritten, id)
		} else if v, ok := vecs[id]; ok {
			ids, queries = append(ids, id), append(queries, k.eng.CoreVector(v))
		}
	}
	var found [][]storage.Candidate
	if len(queries) > 0 {
		if found, err = k.eng.NearestCore(ctx, queries, Neighbours+1); err != nil {
			return nil, nil, fmt.Errorf("map: place new papers: %w", err)
		}
	}
	finest := m.Of[len(m.Of)-1]
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, id := range rewritten { // not new: it stays where it is
		j := m.index[id]
		p := placement{mark: changed[id], title: papers[id].Title, point: m.Points[j], finest: finest[j], mapped: true}
		out[id] = p
		if k.placed != nil {
			k.placed[id] = p
		}
	}
	for i, id := range ids {
		p := placement{mark: changed[id], title: papers[id].Title, finest: -1}
		var weight float64
		votes := map[int]float64{}
		for _, c := range found[i] {
			j, ok := m.index[c.ID]
			if !ok || c.ID == id {
				continue
			}
			w := math.Max(float64(c.Score), 1e-3)
			p.point[0] += float32(w) * m.Points[j][0]
			p.point[1] += float32(w) * m.Points[j][1]
			weight += w
			votes[finest[j]] += w
		}
		if weight == 0 {
			continue // nothing mapped near it yet
		}
		p.point[0] /= float32(weight)
		p.point[1] /= float32(weight)
		best := math.Inf(-1)
		for _, c := range slices.Sorted(maps.Keys(votes)) {
			if votes[c] > best {
				best, p.finest = votes[c], c
			}
		}
		out[id] = p
		if k.placed != nil {
			k.placed[id] = p
		}
	}
	return out, deleted, nil
}
