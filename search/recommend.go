package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/storage"
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
	// recommendDepth is how many candidates Neighbours scores, and the
	// deepest any method's ranking goes.
	recommendDepth = 500
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
	defer e.embedding.Foreground()()
	start := time.Now()
	if err := rq.validate(); err != nil {
		return Results{}, err
	}
	fp := Query{Text: rq.Tag, Filter: rq.Filter, Mode: Mode(rq.Method)}.fingerprint("recommend")
	at, err := e.at(start, rq.Cursor, fp)
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
	res, err := e.page(ctx, at, Results{}, r, Query{Limit: rq.Limit}, nil)
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
	return e.coreOf(v, e.coreDim)
}

// CoreVector is the view of a stored vector that the core models of the
// engine's model gate compare (see ModelGate), unit length, a copy: what
// the corpus map lays papers out by.
func (e *Engine) CoreVector(v []float32) []float32 {
	out := slices.Clone(e.coreView(v))
	embed.Normalize(out)
	return out
}

// NearestCore returns, for each of vs (core vectors, see CoreVector), the
// k stored papers nearest it by the core models' cosine, nearest first.
func (e *Engine) NearestCore(ctx context.Context, vs [][]float32, k int) ([][]storage.Candidate, error) {
	queries := make([][]float32, len(vs))
	ks := make([]int, len(vs))
	for i, v := range vs {
		queries[i], ks[i] = e.fullQuery(v), k
	}
	return e.nearestMany(ctx, queries, ks, papersearch.Filter{})
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
	slices.Sort(named)
	titles, err := e.store.Titles(ctx, slices.Compact(named))
	if err != nil {
		return fmt.Errorf("explain recommendations: %w", err)
	}
	for i := range hits {
		for j := range nearest[i] {
			nearest[i][j].Title = titles[nearest[i][j].ID]
		}
		hits[i].Because = nearest[i]
	}
	return nil
}

// RecommendAmong ranks papers for a collection of members (ids of stored
// papers, no tag needed) by method within f, as Recommend ranks a tagged
// collection, and returns the ids of its first n; ErrEmptyCollection if no
// member is stored. Evaluation asks it for collections it makes.
func (e *Engine) RecommendAmong(ctx context.Context, members []string, method RecommendMethod, f papersearch.Filter, n int) ([]string, error) {
	c, err := e.collectionOf(ctx, members, nil)
	if err != nil {
		return nil, err
	}
	if len(c.members) == 0 {
		return nil, ErrEmptyCollection
	}
	r, err := e.recommend(ctx, c, method, f)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, min(n, len(r.first)))
	for _, x := range r.first[:min(n, len(r.first))] {
		ids = append(ids, x.ID)
	}
	return ids, nil
}
