package search

// The four ways a collection ranks the papers outside it (recommend picks
// one): its centroid, Rocchio's centroid less the background's, a logistic
// model of the collection against the background, and its members'
// neighbours voting.

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/storage"
)

// vectorRanking ranks the papers within filter by their dot product with
// v, a vector in the core models' dimensions.
func (e *Engine) vectorRanking(ctx context.Context, v []float32, filter papersearch.Filter) (ranking, error) {
	q := e.fullQuery(v)
	at := func(ctx context.Context, depth int) ([]Fused, error) {
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
		deeper: func(ctx context.Context) ([]Fused, error) { return at(ctx, maxSeen) }}, nil
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
		queries[i], depths[i] = e.fullQuery(p), recommendDepth
		if i > 0 {
			depths[i] = recommendDepth / (2 * neighbourProbes)
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
	scored := make([]storage.Candidate, 0, len(vecs))
	for id := range vecs {
		scored = append(scored, storage.Candidate{ID: id})
	}
	// Each candidate's vote is its own: the cores share them.
	var wg sync.WaitGroup
	parts := min(runtime.GOMAXPROCS(0), max(1, len(scored)/128))
	for p := range parts {
		part := scored[p*len(scored)/parts : (p+1)*len(scored)/parts]
		wg.Go(func() { vote(part, vecs, len(centroid), members, dismissed) })
	}
	wg.Wait()
	slices.SortFunc(scored, func(a, b storage.Candidate) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.ID, b.ID))
	})
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

// vote sets each candidate's Neighbours score, from its vector (in vecs,
// its first dim dimensions) and the vectors of the collection's members
// and dismissed papers (vectorsOf, read once for all candidates). Twelve
// candidates at a time meet every member (embed.DotsGrid): a few stay in
// the core's cache while each member is read once for them, and every
// cosine is embed.Dot's.
func vote(cands []storage.Candidate, vecs map[string][]float32, dim int, members, dismissed [][]float32) {
	const group = 12
	rows := make([][]float32, 0, group)
	cos := make([]float32, group*max(len(members), len(dismissed)))
	for i := 0; i < len(cands); i += group {
		part := cands[i:min(i+group, len(cands))]
		rows = rows[:0]
		var ts [group]tally
		for j, c := range part {
			rows, ts[j] = append(rows, vecs[c.ID][:dim]), newTally()
		}
		embed.DotsGrid(rows, members, cos)
		for j := range part {
			for _, sim := range cos[j*len(members) : (j+1)*len(members)] {
				ts[j].member(sim)
			}
		}
		embed.DotsGrid(rows, dismissed, cos)
		for j := range part {
			for _, sim := range cos[j*len(dismissed) : (j+1)*len(dismissed)] {
				ts[j].dismissed(sim)
			}
		}
		for j := range part {
			part[j].Score = ts[j].score(len(members), len(dismissed))
		}
	}
}

// tally is one candidate's vote as its cosines arrive: the highest with
// members, highest first, and the highest with a dismissed paper.
type tally struct {
	top     [neighbourVoters]float32
	against float32
}

// newTally is a tally before any cosine has arrived.
func newTally() tally {
	var t tally
	for i := range t.top {
		t.top[i] = float32(math.Inf(-1))
	}
	t.against = -1
	return t
}

// member counts a cosine with a member.
func (t *tally) member(sim float32) {
	for i := range t.top {
		if sim > t.top[i] {
			copy(t.top[i+1:], t.top[i:len(t.top)-1])
			t.top[i] = sim
			return
		}
	}
}

// dismissed counts a cosine with a dismissed paper.
func (t *tally) dismissed(sim float32) { t.against = max(t.against, sim) }

// score is the mean of the highest cosines with members, less
// neighbourAgainst times the highest with a dismissed paper, if any.
func (t *tally) score(members, dismissed int) float32 {
	voters := t.top[:min(neighbourVoters, members)]
	var s float32
	for _, x := range voters {
		s += x
	}
	s /= float32(len(voters))
	if dismissed > 0 {
		s -= neighbourAgainst * t.against
	}
	return s
}
