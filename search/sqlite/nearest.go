package sqlite

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/topk"
	"github.com/papersearch/papersearch/search/storage"
)

// nearest finds the k allowed vectors with the largest cosine similarity
// to v: a first pass over int8 codes (a quarter of the memory traffic of
// float32), then exact re-scoring of the best candidates.
func (x *index) nearest(ctx context.Context, v []float32, k int, f papersearch.Filter) ([]storage.Candidate, error) {
	found, err := x.nearestMany(ctx, [][]float32{v}, []int{k}, f)
	if err != nil {
		return nil, err
	}
	return found[0], nil
}

// scanQuery is one query of a first pass: its int8 codes up to its last
// non-zero one, their scale, and the rows it keeps for re-scoring.
type scanQuery struct {
	codes []int8
	scale float32
	keep  int
}

// nearestMany answers several queries as nearest does, the k[i] nearest
// to vs[i], in one first pass: each row's codes are read from memory once
// for all of them, which is what a pass over a large index waits on. The
// pass may serve other callers' queries too (see passes).
func (x *index) nearestMany(ctx context.Context, vs [][]float32, ks []int, f papersearch.Filter) ([][]storage.Candidate, error) {
	dim := x.dim
	for _, v := range vs {
		if len(v) != dim {
			return nil, fmt.Errorf("nearest: %w: %d, want %d", storage.ErrDimension, len(v), dim)
		}
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	excluded := x.rowsOf(f.Exclude)
	if found, ok := x.nearestTagged(vs, ks, f, excluded); ok {
		return found, ctx.Err()
	}
	j := &scanJob{ctx: ctx, allow: x.allow(f), plain: storage.FieldsFree(f) && len(f.Only) == 0, done: make(chan struct{})}
	for i, v := range vs {
		codes := make([]int8, dim)
		scale := embed.Quantize(codes, v)
		// A query of fewer models than the index holds (the gate's core, a
		// recommendation's) is zero past them: its dot products stop where
		// it does, rounded up to whole 64-code steps of the SIMD kernel,
		// the same sums for less work.
		n := min(dim, (nonZeroPrefix(codes)+63)&^63)
		j.qs = append(j.qs, scanQuery{codes: codes[:n], scale: scale, keep: max(RescoreFactor*ks[i], MinRescore) + len(excluded)})
	}
	x.passes.run(x, j)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]storage.Candidate, len(vs))
	for i, v := range vs {
		first := j.firsts[0][i]
		for _, other := range j.firsts[1:] {
			for _, it := range other[i].Items() {
				first.Push(it.Index, it.Score)
			}
		}
		kept := first.Items()
		rows := make([]int32, 0, len(kept))
		for _, it := range kept {
			if !excluded[it.Index] {
				rows = append(rows, int32(it.Index))
			}
		}
		top := newTopK(ks[i], len(rows))
		x.rescore(top, v[:nonZeroPrefix(v)], rows)
		out[i] = top.sorted()
	}
	return out, nil
}

// nearestTagged answers nearestMany's queries for a filter naming tags
// from the rows holding them, each scored exactly, when they are no more
// than any query's first pass would keep: the first pass would keep them
// all, so the answer is the same, without a pass over every row (a
// collection's recommendations read its members so). ok is false
// otherwise. The caller holds x.mu.
func (x *index) nearestTagged(vs [][]float32, ks []int, f papersearch.Filter, excluded map[int]bool) (found [][]storage.Candidate, ok bool) {
	most := math.MaxInt
	for _, k := range ks {
		most = min(most, max(RescoreFactor*k, MinRescore)+len(excluded))
	}
	rows, ok := x.taggedRows(f, most)
	if !ok {
		return nil, false
	}
	allow := x.allow(f)
	found = make([][]storage.Candidate, len(vs))
	rows = slices.DeleteFunc(rows, func(r int32) bool { return !allow(int(r)) || excluded[int(r)] })
	for i, v := range vs {
		top := newTopK(ks[i], len(rows))
		x.rescore(top, v[:nonZeroPrefix(v)], rows)
		found[i] = top.sorted()
	}
	return found, true
}

// rescore pushes rows onto top, each scored exactly against v (a query's
// first len(v) dimensions). Four rows are scored at a time (embed.Dots4,
// Dot's bits): the rows come from memory in no order, and four in flight
// at once wait on it less than one at a time. The caller holds x.mu.
func (x *index) rescore(top *topK, v []float32, rows []int32) {
	n := len(v)
	var four [4][]float32
	var scores [4]float32
	i := 0
	for ; i+4 <= len(rows); i += 4 {
		for j := range four {
			four[j] = x.vectors.row(int(rows[i+j]))[:n]
		}
		embed.Dots4(v, &four, &scores)
		for j, s := range scores {
			top.push(storage.Candidate{ID: x.ids[rows[i+j]], Score: s})
		}
	}
	for ; i < len(rows); i++ {
		r := int(rows[i])
		top.push(storage.Candidate{ID: x.ids[r], Score: embed.Dot(v, x.vectors.row(r)[:n])})
	}
}

// taggedRows returns, when the filter names tags, the rows holding any
// of them (as allow compares them), ascending, retired ones too; ok is
// false when it names none or they are more than most (known before
// they are gathered when even the longest tag's rows are). The caller
// holds x.mu.
func (x *index) taggedRows(f papersearch.Filter, most int) (rows []int32, ok bool) {
	if len(f.Tags) == 0 {
		return nil, false
	}
	tags := storage.TagKeys(f.Tags)
	for _, t := range tags {
		if len(x.tagRows[t]) > most {
			return nil, false
		}
	}
	for _, t := range tags {
		rows = append(rows, x.tagRows[t]...)
	}
	slices.Sort(rows)
	rows = slices.Compact(rows)
	return rows, len(rows) <= most
}

// scanJob is one caller's queries in a first pass, with its filter; the
// pass fills firsts (by part of the index, then query) and closes done.
type scanJob struct {
	ctx    context.Context
	qs     []scanQuery
	allow  func(row int) bool
	plain  bool // no filter but exclusions: every live row is allowed
	firsts [][]*topk.Selection
	done   chan struct{}
}

// passes runs the first passes of an index: one at once for each two
// cores, each begun by the caller whose queries it scans together with
// the jobs queued while it yielded before beginning; a caller that finds
// them all running queues its job, and the next pass to end scans every
// job queued meanwhile together, reading each row once for all of them.
// Under load a pass that waits on memory so serves many queries for
// about the price of one; alone, a query scans at once.
// Every queued job's caller holds the index's read lock until its job is
// done, so the index does not change under a pass begun for others.
type passes struct {
	mu      sync.Mutex
	running int
	queue   []*scanJob
	shared  atomic.Int64 // jobs scanned in a pass begun for others
}

// run scans j, in a pass of its own or with the jobs queued beside it,
// and returns once j's heaps are filled. The caller holds x.mu for reading.
// Half the cores run passes at most: a caller arrives only while a core
// is free of them, so with every core allowed one, jobs would seldom
// queue; the passes split across the cores left idle (see scan).
func (ps *passes) run(x *index, j *scanJob) {
	ps.mu.Lock()
	if ps.running < max(1, runtime.GOMAXPROCS(0)/2) {
		ps.running++
		ps.mu.Unlock()
		// Yield once before the pass begins, as a pack of questions does
		// (embed's runPacks): on a busy machine the callers already
		// runnable queue their jobs meanwhile and share this pass; on an
		// idle one the yield returns at once.
		runtime.Gosched()
		ps.mu.Lock()
		batch := append([]*scanJob{j}, ps.queue...)
		ps.queue = nil
		ps.mu.Unlock()
		ps.shared.Add(int64(len(batch) - 1))
		x.scan(batch)
		for _, o := range batch[1:] {
			close(o.done)
		}
		ps.next(x)
		return
	}
	ps.queue = append(ps.queue, j)
	ps.mu.Unlock()
	<-j.done
}

// next is called as a pass ends: the jobs queued meanwhile are scanned
// together by a pass of their own, begun now in the background so that the
// caller that ended this one returns; with none queued, the pass's place
// is free.
func (ps *passes) next(x *index) {
	ps.mu.Lock()
	batch := ps.queue
	ps.queue = nil
	if len(batch) == 0 {
		ps.running--
	}
	ps.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	ps.shared.Add(int64(len(batch)))
	go func() {
		x.scan(batch)
		for _, j := range batch {
			close(j.done)
		}
		ps.next(x)
	}()
}

// scan runs one first pass for jobs: every live row's codes are read once
// and compared with each job's queries its filter allows, each job's best
// rows kept in its heaps. A large index's pass is split across the cores
// that other passes leave idle. A job whose context ends is dropped from
// the pass; the pass stops once all are.
func (x *index) scan(jobs []*scanJob) {
	x.passes.mu.Lock()
	running := x.passes.running // this pass among them
	x.passes.mu.Unlock()
	parts := 1
	if len(x.ids) >= parallelScanRows {
		parts = max(1, runtime.GOMAXPROCS(0)-running+1)
	}
	for _, j := range jobs {
		j.firsts = make([][]*topk.Selection, parts)
		for p := range parts {
			j.firsts[p] = make([]*topk.Selection, len(j.qs))
			for i, q := range j.qs {
				j.firsts[p][i] = topk.NewSelection(q.keep)
			}
		}
	}
	part := func(p int) {
		live := slices.Clone(jobs)
		from, to := p*len(x.ids)/parts, (p+1)*len(x.ids)/parts
		sc, _ := x.scans.Get().(*scanScratch)
		if sc == nil {
			sc = &scanScratch{pass: make([]int32, scanBlock+16)}
		}
		defer x.scans.Put(sc)
		pass, codes, heaps, scale, dots, rest := sc.pass, sc.codes, sc.heaps, sc.scale, sc.dots, sc.rest
		defer func() { // kept for the next pass, holding nothing of this one's jobs
			clear(codes[:cap(codes)])
			clear(heaps[:cap(heaps)])
			sc.codes, sc.heaps, sc.scale, sc.dots, sc.rest = codes[:0], heaps[:0], scale[:0], dots, rest
		}()
		// Blocks of scanBlock rows, or fewer at a chunk's end (spanEnd).
		for b, e, blocks := from, 0, 0; b < to; b, blocks = e, blocks+1 {
			e = spanEnd(b, min(b+scanBlock, to))
			if blocks%64 == 0 {
				live = slices.DeleteFunc(live, func(j *scanJob) bool { return j.ctx.Err() != nil })
				if len(live) == 0 {
					return
				}
			}
			codes, heaps, scale = codes[:0], heaps[:0], scale[:0]
			for _, j := range live {
				if !j.plain { // a filter may leave most rows out: only those it allows are read
					for r := b; r < e; r++ {
						if x.ids[r] == "" || !j.allow(r) {
							continue
						}
						for i, q := range j.qs {
							j.firsts[p][i].Push(r, float32(x.dotCodes(q.codes, r))*x.scales[r]*q.scale)
						}
					}
					continue
				}
				for i, q := range j.qs {
					codes, heaps, scale = append(codes, q.codes), append(heaps, j.firsts[p][i]), append(scale, q.scale)
				}
			}
			if len(codes) == 0 {
				continue
			}
			for len(dots) < len(codes) {
				dots, rest = append(dots, make([]int32, scanBlock)), append(rest, make([]int32, scanBlock))
			}
			block := dots[:len(codes)]
			for k := range block {
				block[k] = block[k][:e-b]
			}
			x.dotsCodes(codes, b, block, rest, &sc.forCodes)
			for k, h := range heaps {
				// The rows whose scores reach the floor as the block
				// starts (most fall under it), then each as before; a
				// deleted row's id (empty) is read only for those.
				n := embed.ScaledAbove(block[k], x.scales[b:e], scale[k], h.Floor(), pass)
				for _, i := range pass[:n] {
					r := b + int(i)
					if s := float32(block[k][i]) * x.scales[r] * scale[k]; h.Beats(r, s) && x.ids[r] != "" {
						h.Push(r, s)
					}
				}
			}
		}
	}
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		wg.Add(1)
		go func() { defer wg.Done(); part(p) }()
	}
	part(0)
	wg.Wait()
}

// scanScratch is what one part of a first pass works in, kept from pass
// to pass (index.scans): the rows of a block that may beat a selection's
// floor, the plain jobs' queries of a block with their selections and
// scales, a buffer for each one's products with the block's rows (and
// their codes past the split), and dotsCodes' own.
type scanScratch struct {
	pass       []int32
	codes      [][]int8
	heaps      []*topk.Selection
	scale      []float32
	dots, rest [][]int32
	forCodes   codesScratch
}

// scanBlock is how many rows a first pass compares with each query at
// once: their codes stay in the core's cache while every job's queries
// are compared with them.
const scanBlock = 256

// nonZeroPrefix is the length of v without its trailing zeros.
func nonZeroPrefix[T int8 | float32](v []T) int {
	n := len(v)
	for n > 0 && v[n-1] == 0 {
		n--
	}
	return n
}
