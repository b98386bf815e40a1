package sqlite

// The first pass's int8 codes: their products with a pass's queries, and
// where a row's codes split between the head and the tail matrices.

import "github.com/papersearch/papersearch/embed"

// dotCodes is the inner product of the int8 codes q, a query's up to its
// last non-zero one, with row r's. The caller holds x.mu.
func (x *index) dotCodes(q []int8, r int) int32 {
	n, split := len(q), x.split
	d := embed.DotInt8(q[:min(n, split)], x.head.row(r))
	if n > split {
		d += embed.DotInt8(q[split:], x.tail.row(r))
	}
	return d
}

// dotsCodes sets dots[k][i] to the inner product of the codes qs[k] (a
// query's up to its last non-zero one) with row from+i's, for every query
// and len(dots[0]) rows in one span of the matrix (spanEnd). Queries whose
// codes before the split are as long are compared with the rows together
// (embed.DotsInt8Many: each row read once for four queries); those reaching
// past the split add their products with the rows' codes there, computed
// together into rest (one buffer as long as dots[0] for each query). sc
// is its scratch. The caller holds x.mu.
func (x *index) dotsCodes(qs [][]int8, from int, dots, rest [][]int32, sc *codesScratch) {
	split, count := x.split, len(dots[0])
	head := x.head.span(from, count)
	headLen := func(k int) int { return min(len(qs[k]), split) }
	heads, tails, tailDots, tailRest := sc.heads[:0], sc.tails[:0], sc.tailDots[:0], sc.tailRest[:0]
	defer func() { // kept for the next block, holding none of the queries
		clear(heads[:cap(heads)])
		clear(tails[:cap(tails)])
		sc.heads, sc.tails, sc.tailDots, sc.tailRest = heads[:0], tails[:0], tailDots, tailRest
	}()
	for k := 0; k < len(qs); {
		n, run := headLen(k), k+1
		for run < len(qs) && headLen(run) == n {
			run++
		}
		heads = heads[:0]
		for _, q := range qs[k:run] {
			heads = append(heads, q[:n])
		}
		embed.DotsInt8Many(heads, head, split, dots[k:run])
		k = run
	}
	for k, q := range qs {
		if len(q) > split {
			tails, tailDots, tailRest = append(tails, q[split:]), append(tailDots, dots[k]), append(tailRest, rest[len(tailRest)][:count])
		}
	}
	if len(tails) == 0 {
		return
	}
	// The tails' lengths differ only if some query ends past the split
	// before the last dimension; each run of one length goes together.
	for k := 0; k < len(tails); {
		run := k + 1
		for run < len(tails) && len(tails[run]) == len(tails[k]) {
			run++
		}
		embed.DotsInt8Many(tails[k:run], x.tail.span(from, count), x.dim-split, tailRest[k:run])
		k = run
	}
	for k, d := range tailDots {
		for i, r := range tailRest[k] {
			d[i] += r
		}
	}
}

// codesScratch is what dotsCodes slices its queries and products into,
// kept by a pass from one block to the next.
type codesScratch struct {
	heads, tails       [][]int8
	tailDots, tailRest [][]int32
}

// resplit keeps the codes of dimensions [0, split) apart from the rest
// from now on (see head). The caller holds x.mu for writing.
func (x *index) resplit(split int) {
	if split <= 0 || split > x.dim {
		split = x.dim
	}
	if split == x.split {
		return
	}
	rows, old := len(x.scales), x.split
	head, tail := newMatrix[int8](split, cap(x.scales)), newMatrix[int8](x.dim-split, cap(x.scales))
	for r := range rows {
		row := x.scratch
		copy(row, x.head.row(r))
		copy(row[old:], x.tail.row(r))
		copy(head.add(), row[:split])
		copy(tail.add(), row[split:])
	}
	x.split, x.head, x.tail = split, head, tail
}
