package search

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
)

// A map is remade once this many papers have changed since it was made,
// or this share of those it holds, whichever is more.
const (
	mapRemakeMin   = 100
	mapRemakeShare = 0.05
)

// ErrMapNotReady wraps the error of a map asked for before the first one
// is made; MapProgress says how far that is.
var ErrMapNotReady = errors.New("the map is being made")

// MapProgress is how far the making of a map is.
type MapProgress struct {
	Step        MapStep
	Done, Total int
}

func (p MapProgress) Error() string {
	return fmt.Sprintf("%s: %s, %d of %d", ErrMapNotReady, p.Step, p.Done, p.Total)
}

func (p MapProgress) Unwrap() error { return ErrMapNotReady }

// writeLog notes the papers written or deleted since a point, each with
// the sequence number of its last write, so a map made from a snapshot
// forgets only the writes it saw.
type writeLog struct {
	mu      sync.Mutex
	seq     uint64
	changed map[string]uint64 // id -> seq of its last write
	deleted map[string]uint64
}

func newWriteLog() *writeLog {
	return &writeLog{changed: map[string]uint64{}, deleted: map[string]uint64{}}
}

func (w *writeLog) note(ids []string, deleted bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range ids {
		w.seq++
		if deleted {
			delete(w.changed, id)
			w.deleted[id] = w.seq
		} else {
			delete(w.deleted, id)
			w.changed[id] = w.seq
		}
	}
}

// mark is the sequence number of the last write.
func (w *writeLog) mark() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seq
}

// forget drops the writes up to mark.
func (w *writeLog) forget(mark uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, written := range []map[string]uint64{w.changed, w.deleted} {
		maps.DeleteFunc(written, func(_ string, s uint64) bool { return s <= mark })
	}
}

// since is a copy of the changed and deleted papers, with their marks.
func (w *writeLog) since() (changed, deleted map[string]uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.changed), maps.Clone(w.deleted)
}

// mapState is the map being served, how far the next one is, and where
// the papers written since it was made were placed.
type mapState struct {
	mu       sync.Mutex
	current  *CorpusMap
	progress MapProgress
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

// KeepMap makes the map of the corpus and remakes it once enough papers
// have changed (mapRemakeMin, mapRemakeShare), looking every tick, until
// ctx ends. Each making is logged with its time.
func (e *Engine) KeepMap(ctx context.Context, tick time.Duration) {
	for {
		if due, err := e.mapDue(ctx); err != nil {
			e.log.Warn("map: could not tell whether it is due", "error", err)
		} else if due {
			e.remakeMap(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(tick):
		}
	}
}

// mapDue reports whether the map should be made now.
func (e *Engine) mapDue(ctx context.Context) (bool, error) {
	changed, deleted := e.store.writes.since()
	e.maps.mu.Lock()
	current := e.maps.current
	e.maps.mu.Unlock()
	if current != nil {
		return float64(len(changed)+len(deleted)) >= max(mapRemakeMin, mapRemakeShare*float64(len(current.IDs))), nil
	}
	n, err := e.store.Count(ctx)
	return n >= 2, err
}

// remakeMap makes the map now and serves it.
func (e *Engine) remakeMap(ctx context.Context) {
	mark := e.store.writes.mark()
	e.maps.mu.Lock()
	e.maps.building, e.maps.progress = true, MapProgress{Step: "starting"}
	e.maps.mu.Unlock()
	m, err := e.BuildMap(ctx, MapOptions{}, func(step MapStep, done, total int) {
		e.maps.mu.Lock()
		e.maps.progress = MapProgress{Step: step, Done: done, Total: total}
		e.maps.mu.Unlock()
	})
	e.maps.mu.Lock()
	defer e.maps.mu.Unlock()
	e.maps.building, e.maps.lastErr = false, err
	if err != nil {
		if ctx.Err() == nil {
			e.log.Error("map: making it failed", "error", err)
		}
		return
	}
	e.store.writes.forget(mark)
	e.maps.current, e.maps.placed = m, map[string]placement{}
	e.log.Info("map made", "papers", len(m.IDs), "levels", len(m.Clusters), "took", m.Took.Round(time.Millisecond))
}

// MapQuery asks for the map of the papers within Filter, with the results
// of a search for Highlight and the papers of the collection HighlightTag
// (each when not empty) lit up.
type MapQuery struct {
	Filter       papersearch.Filter
	Highlight    string
	HighlightTag string
}

// MapView is the map as served: the clusters of every level and the
// papers within the query's filter, papers written since the map was made
// placed among their nearest.
type MapView struct {
	Built     time.Time
	Clusters  [][]MapCluster
	Points    []MapPoint
	Highlight []string
}

// MapPoint is one paper on the map: its place in [0, 1]², its cluster at
// the finest level (the coarser ones are its parents) and its title.
type MapPoint struct {
	ID     string
	Title  string
	Point  [2]float32
	Finest int
	// Placed is true for a paper written since the map was made, put
	// among its nearest mapped papers until the map is remade.
	Placed bool
}

// Map returns the map of the corpus as q asks. Before the first map is
// made it is an error wrapping ErrMapNotReady (a MapProgress); a corpus of
// fewer than two papers has an empty map.
func (e *Engine) Map(ctx context.Context, q MapQuery) (MapView, error) {
	defer e.lanes.foreground()()
	if err := ValidateFilter(q.Filter); err != nil {
		return MapView{}, err
	}
	e.maps.mu.Lock()
	current, progress, building := e.maps.current, e.maps.progress, e.maps.building
	e.maps.mu.Unlock()
	if current == nil {
		if n, err := e.store.Count(ctx); err != nil || n < 2 && !building {
			return MapView{Clusters: [][]MapCluster{}, Points: []MapPoint{}, Highlight: []string{}}, err
		}
		return MapView{}, progress
	}
	placed, deleted, err := e.placeWritten(ctx, current)
	if err != nil {
		return MapView{}, err
	}
	var allowed map[string]bool
	if !FieldsFree(q.Filter) || len(q.Filter.Only) > 0 || len(q.Filter.Exclude) > 0 {
		if allowed, err = e.allowedIDs(ctx, q.Filter); err != nil {
			return MapView{}, err
		}
	}
	view := MapView{Built: current.Built, Clusters: current.Clusters, Points: make([]MapPoint, 0, len(current.IDs)+len(placed))}
	finest := current.Of[len(current.Of)-1]
	for i, id := range current.IDs {
		if _, gone := deleted[id]; gone || allowed != nil && !allowed[id] {
			continue
		}
		if _, moved := placed[id]; moved {
			continue
		}
		view.Points = append(view.Points, MapPoint{ID: id, Title: current.Titles[i], Point: current.Points[i], Finest: finest[i]})
	}
	for _, id := range slices.Sorted(maps.Keys(placed)) {
		if allowed != nil && !allowed[id] {
			continue
		}
		p := placed[id]
		view.Points = append(view.Points, MapPoint{ID: id, Title: p.title, Point: p.point, Finest: p.finest, Placed: !p.mapped})
	}
	if view.Highlight, err = e.highlighted(ctx, q); err != nil {
		return MapView{}, err
	}
	return view, nil
}

// allowedIDs is the ids of the papers f allows, as the store filters them
// (one dense retrieval of every paper, whatever it ranks by).
func (e *Engine) allowedIDs(ctx context.Context, f papersearch.Filter) (map[string]bool, error) {
	n, err := e.store.Count(ctx)
	if err != nil || n == 0 {
		return map[string]bool{}, err
	}
	probe := make([]float32, e.store.Model().Dim)
	probe[0] = 1
	found, err := e.store.Nearest(ctx, probe, n, f)
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
func (e *Engine) highlighted(ctx context.Context, q MapQuery) ([]string, error) {
	out := []string{}
	if q.Highlight != "" {
		res, err := e.Search(ctx, Query{Text: q.Highlight, Limit: MaxLimit, Filter: q.Filter})
		if err != nil {
			return nil, err
		}
		for _, h := range res.Hits {
			out = append(out, h.ID)
		}
	}
	if q.HighlightTag != "" {
		papers, err := e.CollectionPapers(ctx, q.HighlightTag)
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
func (e *Engine) placeWritten(ctx context.Context, m *CorpusMap) (map[string]placement, map[string]uint64, error) {
	changed, deleted := e.store.writes.since()
	e.maps.mu.Lock()
	out := make(map[string]placement, len(changed))
	var todo []string
	for id, mark := range changed {
		if p, ok := e.maps.placed[id]; ok && p.mark == mark {
			out[id] = p
		} else {
			todo = append(todo, id)
		}
	}
	e.maps.mu.Unlock()
	if len(todo) == 0 {
		return out, deleted, nil
	}
	slices.Sort(todo)
	vecs, err := e.store.Vectors(ctx, todo)
	if err != nil {
		return nil, nil, err
	}
	papers, err := e.store.Lookup(ctx, todo)
	if err != nil {
		return nil, nil, err
	}
	var ids, rewritten []string
	var queries [][]float32
	for _, id := range todo {
		if _, ok := m.index[id]; ok {
			rewritten = append(rewritten, id)
		} else if v, ok := vecs[id]; ok {
			q := slices.Clone(e.coreView(v))
			embed.Normalize(q)
			ids, queries = append(ids, id), append(queries, e.fullQuery(q))
		}
	}
	ks := make([]int, len(queries))
	for i := range ks {
		ks[i] = MapNeighbours + 1
	}
	var found [][]Candidate
	if len(queries) > 0 {
		if found, err = e.nearestMany(ctx, queries, ks, papersearch.Filter{}); err != nil {
			return nil, nil, fmt.Errorf("map: place new papers: %w", err)
		}
	}
	finest := m.Of[len(m.Of)-1]
	e.maps.mu.Lock()
	defer e.maps.mu.Unlock()
	for _, id := range rewritten { // not new: it stays where it is
		j := m.index[id]
		p := placement{mark: changed[id], title: papers[id].Title, point: m.Points[j], finest: finest[j], mapped: true}
		out[id] = p
		if e.maps.placed != nil {
			e.maps.placed[id] = p
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
		if e.maps.placed != nil {
			e.maps.placed[id] = p
		}
	}
	return out, deleted, nil
}
