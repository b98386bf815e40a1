package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
)

// Recommendations for a collection (a tag): the papers outside it that fit
// it best, each with the members it is nearest to. A collection may also
// hold papers marked "not interested" (papersearch.NotInterestedTag), which
// push recommendations away from themselves.

// RecommendMethod names how a collection's papers rank the others.
type RecommendMethod string

const (
	// Centroid ranks papers by their cosine with the mean of the
	// collection's vectors, a quarter of the mean of those marked not
	// interested taken away (like/unlike's Rocchio weights).
	Centroid RecommendMethod = "centroid"
	// Rocchio also takes away the mean of a sample of the corpus, so that
	// what every paper shares counts for less: a linear model fitted in
	// closed form.
	Rocchio RecommendMethod = "rocchio"
	// Logistic ranks papers by a logistic regression fitted at request
	// time, the members against a sample of the corpus and the papers
	// marked not interested (arxiv-sanity's per-tag SVM, on the dense
	// vectors).
	Logistic RecommendMethod = "logistic"
	// Neighbours scores the candidates nearest the members by their mean
	// cosine with their three nearest members, less their cosine with the
	// nearest paper marked not interested: each member votes for its own
	// neighbourhood, so a collection of several topics is served in each.
	Neighbours RecommendMethod = "neighbours"
)

// RecommendMethods lists the methods, the default first.
func RecommendMethods() []RecommendMethod {
	return []RecommendMethod{Neighbours, Centroid, Rocchio, Logistic}
}

// Limits of a recommendation.
const (
	// MaxCollectionPapers bounds the members (and the papers marked not
	// interested) a recommendation reads: a larger collection is read by
	// its first MaxCollectionPapers papers nearest its first member.
	MaxCollectionPapers = 2000
	// RecommendDepth is how many candidates Neighbours scores, and the
	// deepest any method's ranking goes.
	RecommendDepth = 500
	// becauseMembers is how many members a result names as nearest.
	becauseMembers = 3
)

// RecommendQuery asks for the papers outside the collection Tag that fit
// it best, within Filter.
type RecommendQuery struct {
	Tag    string
	Filter papersearch.Filter
	Limit  int
	Cursor string
	// Method is how the collection ranks papers; "" is the default
	// (RecommendMethods' first).
	Method RecommendMethod
}

// ErrEmptyCollection wraps the error of a recommendation for a collection
// no paper holds.
var ErrEmptyCollection = errors.New("no paper holds this collection's tag")

// validate checks the query, filling the default limit and method.
func (rq *RecommendQuery) validate() error {
	if !papersearch.ValidCollectionTag(rq.Tag) {
		return invalidField("tag", papersearch.ErrBadCollectionTag.Error())
	}
	rq.Tag = strings.ToLower(rq.Tag)
	q := Query{Limit: rq.Limit, Filter: rq.Filter}
	if err := q.validateShape(); err != nil {
		return err
	}
	rq.Limit = q.Limit
	if rq.Method == "" {
		rq.Method = RecommendMethods()[0]
	}
	if !slices.Contains(RecommendMethods(), rq.Method) {
		return invalidField("method", "must be neighbours, centroid, rocchio or logistic")
	}
	return nil
}

// Recommend returns the papers outside the collection that fit it best,
// best first, each hit naming the members it is nearest to (Hit.Because);
// papers marked not interested for the collection are never returned. A
// collection no paper holds is ErrEmptyCollection.
func (e *Engine) Recommend(ctx context.Context, rq RecommendQuery) (Results, error) {
	defer e.lanes.foreground()()
	start := time.Now()
	if err := rq.validate(); err != nil {
		return Results{}, err
	}
	fp := Query{Text: rq.Tag, Filter: rq.Filter, Mode: Mode(rq.Method)}.fingerprint("recommend")
	seen, err := e.seen(rq.Cursor, fp)
	if err != nil {
		return Results{}, err
	}
	c, err := e.readCollection(ctx, rq.Tag)
	if err != nil {
		return Results{}, err
	}
	if len(c.members) == 0 {
		return Results{}, fmt.Errorf("%w: %q", ErrEmptyCollection, rq.Tag)
	}
	r, err := e.recommend(ctx, c, rq.Method, rq.Filter)
	if err != nil {
		return Results{}, err
	}
	res, err := e.page(ctx, start, Results{}, r, Query{Limit: rq.Limit}, seen, fp, nil, nil)
	if err != nil {
		return Results{}, err
	}
	if err := e.because(ctx, res.Hits, c); err != nil {
		return Results{}, err
	}
	return res, nil
}

// collection is what a recommendation reads of a collection: its
// members, the papers marked not interested for it, and their vectors as
// the gate's core models see them (coreView).
type collection struct {
	members, dismissed []string
	vectors            map[string][]float32
}

// readCollection reads the papers of a collection and those marked not
// interested for it, with their vectors.
func (e *Engine) readCollection(ctx context.Context, tag string) (collection, error) {
	members, err := e.tagged(ctx, tag)
	if err != nil {
		return collection{}, err
	}
	dismissed, err := e.tagged(ctx, papersearch.NotInterestedTag(tag))
	if err != nil {
		return collection{}, err
	}
	return e.collectionOf(ctx, members, dismissed)
}

// collectionOf reads the vectors of the collection of members, dismissed
// the papers marked not interested for it; papers no longer stored are
// left out.
func (e *Engine) collectionOf(ctx context.Context, members, dismissed []string) (collection, error) {
	vecs, err := e.store.Vectors(ctx, slices.Concat(members, dismissed))
	if err != nil {
		return collection{}, fmt.Errorf("read the collection's vectors: %w", err)
	}
	c := collection{vectors: make(map[string][]float32, len(vecs))}
	for id, v := range vecs {
		c.vectors[id] = e.coreView(v)
	}
	gone := func(id string) bool { return c.vectors[id] == nil }
	c.members = slices.DeleteFunc(slices.Clone(members), gone)
	c.dismissed = slices.DeleteFunc(slices.Clone(dismissed), gone)
	return c, nil
}

// tagged returns the ids of the papers holding tag, at most
// MaxCollectionPapers.
func (e *Engine) tagged(ctx context.Context, tag string) ([]string, error) {
	if tag == "" {
		return nil, nil
	}
	probe := make([]float32, e.store.Model().Dim)
	probe[0] = 1 // any unit vector: the filter, not the order, is wanted
	cands, err := e.store.Nearest(ctx, probe, MaxCollectionPapers, papersearch.Filter{Tags: []string{tag}})
	if err != nil {
		return nil, fmt.Errorf("read the collection %q: %w", tag, err)
	}
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.ID
	}
	slices.Sort(ids)
	return ids, nil
}

// coreView is a stored vector's dimensions the gate's core models fill,
// scaled so that its dot product with the same dimensions of another
// stored vector is the mean of those models' cosines; the whole vector
// when the gate keeps every model.
func (e *Engine) coreView(v []float32) []float32 {
	c := e.core(v)
	if e.gated() {
		return c[:e.coreDim]
	}
	return c
}

// fullQuery pads a query in the core models' dimensions with zeros to a
// stored vector's length, for the store to rank by.
func (e *Engine) fullQuery(v []float32) []float32 {
	out := make([]float32, e.store.Model().Dim)
	copy(out, v)
	return out
}

// meanOf is the mean of the vectors of ids in c (nil for none).
func (c collection) meanOf(ids []string) []float32 {
	if len(ids) == 0 {
		return nil
	}
	var mean []float32
	for _, id := range ids {
		v := c.vectors[id]
		if mean == nil {
			mean = make([]float32, len(v))
		}
		for i, x := range v {
			mean[i] += x
		}
	}
	for i := range mean {
		mean[i] /= float32(len(ids))
	}
	return mean
}

// recommend ranks the papers within filter, the collection's own and its
// dismissed ones excluded, by method.
func (e *Engine) recommend(ctx context.Context, c collection, method RecommendMethod, filter papersearch.Filter) (ranking, error) {
	filter.Exclude = slices.Concat(filter.Exclude, c.members, c.dismissed)
	switch method {
	case Centroid:
		return e.vectorRanking(ctx, c.rocchio(nil), filter)
	case Rocchio, Logistic:
		bg, err := e.background(ctx, c)
		if err != nil {
			return ranking{}, err
		}
		if method == Rocchio {
			return e.vectorRanking(ctx, c.rocchio(bg), filter)
		}
		return e.vectorRanking(ctx, c.logistic(bg), filter)
	}
	return e.neighbours(ctx, c, filter)
}

// vectorRanking ranks the papers within filter by their dot product with
// v, a vector in the core models' dimensions.
func (e *Engine) vectorRanking(ctx context.Context, v []float32, filter papersearch.Filter) (ranking, error) {
	q := e.fullQuery(v)
	at := func(ctx context.Context, depth int) ([]fused, error) {
		cands, err := e.nearest(ctx, q, depth, filter)
		if err != nil {
			return nil, fmt.Errorf("dense retrieval: %w", err)
		}
		return single(cands, true), nil
	}
	first, err := at(ctx, CandidateDepth)
	if err != nil {
		return ranking{}, err
	}
	return ranking{first: first, more: cut(len(first), CandidateDepth),
		deeper: func(ctx context.Context) ([]fused, error) { return at(ctx, maxSeen) }}, nil
}

// rocchio is the mean of the members' vectors, less a quarter of the mean
// of the dismissed papers' and, given a sample of the corpus, less its
// mean: Centroid and Rocchio's query.
func (c collection) rocchio(background map[string][]float32) []float32 {
	v := c.meanOf(c.members)
	subtract := func(mean []float32, w float32) {
		for i := range v {
			v[i] -= w * mean[i]
		}
	}
	if d := c.meanOf(c.dismissed); d != nil {
		subtract(d, 0.25)
	}
	if len(background) > 0 {
		bg := collection{vectors: background}
		subtract(bg.meanOf(mapKeys(background)), 1)
	}
	return v
}

// mapKeys returns m's keys, sorted.
func mapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// backgroundSize is how many papers of the corpus a linear model is
// fitted against: backgroundProbes probes, each its nearest backgroundEach.
const (
	backgroundProbes = 8
	backgroundEach   = 64
)

// background is a sample of the corpus outside the collection, by id, in
// core dimensions: the papers nearest backgroundProbes random directions
// (drawn from a seed of the collection's members, so that every page of
// a recommendation fits the same model).
func (e *Engine) background(ctx context.Context, c collection) (map[string][]float32, error) {
	seed := uint64(14695981039346656037)
	for _, id := range c.members {
		for _, b := range []byte(id) {
			seed = (seed ^ uint64(b)) * 1099511628211
		}
	}
	r := rand.New(rand.NewPCG(seed, 1))
	filter := papersearch.Filter{Exclude: slices.Concat(c.members, c.dismissed)}
	var ids []string
	for range backgroundProbes {
		probe := make([]float32, e.store.Model().Dim)
		for i := range probe {
			probe[i] = float32(r.NormFloat64())
		}
		embed.Normalize(probe)
		cands, err := e.store.Nearest(ctx, probe, backgroundEach, filter)
		if err != nil {
			return nil, fmt.Errorf("sample the corpus: %w", err)
		}
		for _, cd := range cands {
			ids = append(ids, cd.ID)
		}
	}
	slices.Sort(ids)
	vecs, err := e.store.Vectors(ctx, slices.Compact(ids))
	if err != nil {
		return nil, fmt.Errorf("sample the corpus: %w", err)
	}
	for id, v := range vecs {
		vecs[id] = e.coreView(v)
	}
	return vecs, nil
}

// Logistic's fit: plain gradient descent on the mean log loss, the
// members weighing as much as the background and, when there are any, the
// dismissed papers as much again (a paper marked not interested says more
// than one drawn at random), with an L2 penalty.
const (
	logisticSteps = 100
	logisticRate  = 2
	logisticL2    = 1e-3
)

// logistic fits a logistic regression of the members (1) against the
// background and the dismissed papers (0) and returns its weights, the
// direction papers are ranked along.
func (c collection) logistic(background map[string][]float32) []float32 {
	type example struct {
		x      []float32
		y, wgt float32
	}
	var xs []example
	for _, id := range c.members {
		xs = append(xs, example{c.vectors[id], 1, 1 / float32(len(c.members))})
	}
	for _, id := range mapKeys(background) {
		xs = append(xs, example{background[id], 0, 1 / float32(len(background))})
	}
	for _, id := range c.dismissed {
		xs = append(xs, example{c.vectors[id], 0, 1 / float32(len(c.dismissed))})
	}
	w := c.rocchio(background) // a start already pointing the right way
	var b float32
	grad := make([]float32, len(w))
	for range logisticSteps {
		clear(grad)
		var gb float32
		for _, ex := range xs {
			p := 1 / (1 + float32(math.Exp(-float64(embed.Dot(w, ex.x)+b))))
			g := ex.wgt * (p - ex.y)
			for i, v := range ex.x {
				grad[i] += g * v
			}
			gb += g
		}
		for i := range w {
			w[i] -= logisticRate * (grad[i] + logisticL2*w[i])
		}
		b -= logisticRate * gb
	}
	return w
}

// Neighbours' shape: how many candidates each probe retrieves, how many
// members probe besides the centroid, how many of a candidate's nearest
// members vote, and how much its nearest dismissed paper counts against
// it.
const (
	neighbourProbes  = 4
	neighbourVoters  = 3
	neighbourAgainst = 0.5
)

// neighbours ranks the candidates nearest the collection's centroid and
// nearest its members farthest from it by their mean cosine with their
// neighbourVoters nearest members, less neighbourAgainst times their
// cosine with the nearest dismissed paper.
func (e *Engine) neighbours(ctx context.Context, c collection, filter papersearch.Filter) (ranking, error) {
	centroid := c.meanOf(c.members)
	probes := [][]float32{centroid}
	for _, id := range c.spread(centroid, neighbourProbes) {
		probes = append(probes, c.vectors[id])
	}
	queries, depths := make([][]float32, len(probes)), make([]int, len(probes))
	for i, p := range probes {
		queries[i], depths[i] = e.fullQuery(p), RecommendDepth
		if i > 0 {
			depths[i] = RecommendDepth / (2 * neighbourProbes)
		}
	}
	found, err := e.nearestMany(ctx, queries, depths, filter)
	if err != nil {
		return ranking{}, fmt.Errorf("dense retrieval: %w", err)
	}
	var pool []string
	for _, cands := range found {
		for _, cd := range cands {
			pool = append(pool, cd.ID)
		}
	}
	slices.Sort(pool)
	vecs, err := e.store.Vectors(ctx, slices.Compact(pool))
	if err != nil {
		return ranking{}, fmt.Errorf("read the candidates' vectors: %w", err)
	}
	members, dismissed := c.vectorsOf(c.members), c.vectorsOf(c.dismissed)
	scored := make([]Candidate, 0, len(vecs))
	for id := range vecs {
		scored = append(scored, Candidate{ID: id})
	}
	// Each candidate's vote is its own: the cores share them.
	var wg sync.WaitGroup
	parts := min(runtime.GOMAXPROCS(0), max(1, len(scored)/128))
	for p := range parts {
		part := scored[p*len(scored)/parts : (p+1)*len(scored)/parts]
		wg.Go(func() {
			for i := range part {
				part[i].Score = vote(vecs[part[i].ID][:len(centroid)], members, dismissed)
			}
		})
	}
	wg.Wait()
	slices.SortFunc(scored, func(a, b Candidate) int { return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.ID, b.ID)) })
	return ranking{first: single(scored, true)}, nil
}

// spread returns up to n members, each in turn the one farthest from
// from and from those already chosen: the collection's outlying topics.
func (c collection) spread(from []float32, n int) []string {
	var out []string
	near := make(map[string]float32, len(c.members)) // each member's highest cosine with what is chosen
	for _, id := range c.members {
		near[id] = embed.Dot(c.vectors[id], from)
	}
	for len(out) < min(n, len(c.members)-1) {
		far := ""
		for _, id := range c.members {
			if !slices.Contains(out, id) && (far == "" || near[id] < near[far]) {
				far = id
			}
		}
		out = append(out, far)
		for _, id := range c.members {
			near[id] = max(near[id], embed.Dot(c.vectors[id], c.vectors[far]))
		}
	}
	return out
}

// vectorsOf is the vectors of ids in c, in their order.
func (c collection) vectorsOf(ids []string) [][]float32 {
	out := make([][]float32, len(ids))
	for i, id := range ids {
		out[i] = c.vectors[id]
	}
	return out
}

// vote is a candidate's Neighbours score, from its vector v in core
// dimensions and the vectors of the collection's members and dismissed
// papers (vectorsOf, read once for all candidates).
func vote(v []float32, members, dismissed [][]float32) float32 {
	var top [neighbourVoters]float32 // the highest cosines, highest first
	for i := range top {
		top[i] = float32(math.Inf(-1))
	}
	for _, m := range members {
		sim := embed.Dot(m, v)
		for i := range top {
			if sim > top[i] {
				copy(top[i+1:], top[i:len(top)-1])
				top[i] = sim
				break
			}
		}
	}
	voters := top[:min(neighbourVoters, len(members))]
	var s float32
	for _, x := range voters {
		s += x
	}
	s /= float32(len(voters))
	if len(dismissed) > 0 {
		var against float32 = -1
		for _, d := range dismissed {
			against = max(against, embed.Dot(d, v))
		}
		s -= neighbourAgainst * against
	}
	return s
}

// because names, on each hit, the members of c it is nearest to: up to
// becauseMembers, by cosine.
func (e *Engine) because(ctx context.Context, hits []papersearch.Hit, c collection) error {
	if len(hits) == 0 {
		return nil
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	vecs, err := e.store.Vectors(ctx, ids)
	if err != nil {
		return fmt.Errorf("explain recommendations: %w", err)
	}
	nearest := make([][]papersearch.Neighbour, len(hits))
	var named []string
	for i, h := range hits {
		v := vecs[h.ID]
		if v == nil {
			continue
		}
		v = v[:len(c.vectors[c.members[0]])]
		ns := make([]papersearch.Neighbour, len(c.members))
		for j, id := range c.members {
			ns[j] = papersearch.Neighbour{ID: id, Similarity: embed.Dot(c.vectors[id], v)}
		}
		slices.SortFunc(ns, func(a, b papersearch.Neighbour) int {
			return cmp.Or(cmp.Compare(b.Similarity, a.Similarity), strings.Compare(a.ID, b.ID))
		})
		nearest[i] = ns[:min(becauseMembers, len(ns))]
		for _, n := range nearest[i] {
			named = append(named, n.ID)
		}
	}
	papers, err := e.store.Lookup(ctx, named)
	if err != nil {
		return fmt.Errorf("explain recommendations: %w", err)
	}
	for i := range hits {
		for j := range nearest[i] {
			nearest[i][j].Title = papers[nearest[i][j].ID].Title
		}
		hits[i].Because = nearest[i]
	}
	return nil
}
