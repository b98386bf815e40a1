package embed

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Questions asked at once are encoded together. A question is a couple of
// dozen word pieces: encoded alone, each panel of a dense layer's weights
// is read for three or four tiles of rows and the next panel evicts it;
// packed one after another into the rows of one encode, concurrent
// questions share every read of the weights. Measured as its upper bound,
// eight questions of 15–21 word pieces as one text on one core of an AMD
// EPYC Zen 4: bge-small-en-v1.5 4.0 → 3.3 ms a question, e5-small-v2
// 3.2 → 2.3 ms. A question's vector is the same packed or alone
// (bert.encode), on AMX too: every row of a product goes through the
// tile unit, the rows past whole blocks padded to one (mulAMX), and a
// tile's sums for a row do not depend on the rows beside it (measured on
// an Intel Xeon with AMX: TestConcurrentQuestionsPacked, and
// TestLocalModelsMatchReference's packed encodes).

// sequence is one text of an encode: its token ids, where its pooled,
// L2-normalised vector goes (length hidden), and spans of it whose
// tokens' mean goes into parts (may be nil).
type sequence struct {
	ids   []int32
	out   []float32
	spans [][2]int
	parts [][]float32
}

// sequences returns the row ranges, [from, to), of the sequences whose n
// rows a product is given: those of the encode running (s.packed), else
// one of all n rows.
func (s *scratch) sequences(n int) [][2]int {
	if len(s.packed) > 0 {
		return s.packed
	}
	s.whole[0] = [2]int{0, n}
	return s.whole[:]
}

// packTokens is the longest text, in word pieces, packed with others: a
// question, not an abstract, whose hundreds of rows use each weight panel
// many times on their own.
const packTokens = 64

// packRows bounds the rows of one packed encode.
const packRows = 512

// packRunners is how many packs of one model are encoded at once. With
// one, the questions asked while a pack is being encoded all wait for the
// next; with more, a question that finds a runner free starts a pack of
// its own, and packs stay single (measured over 29,100 papers, 16
// clients: 1.06 questions a pack with one runner a core). A pack alone
// on the machine splits its products across every core, as a lone text
// does; the models of a Pair each run their own.
const packRunners = 1

// packer holds the texts waiting to be packed into an encode, and counts
// the packs being encoded.
type packer struct {
	mu      sync.Mutex
	waiting []*packedText
	rows    int // of the waiting texts
	running int
	// shared counts the texts encoded in a pack with others.
	shared atomic.Int64
}

// packedText is one text waiting for a pack: done is closed once its
// vector is in seq.out, or once ctx ended before it was encoded.
type packedText struct {
	ctx  context.Context
	seq  sequence
	done chan struct{}
}

// encodePacked encodes the texts of ids, none longer than packTokens,
// into out, packed with those of other callers meanwhile: the texts wait
// in l's packer, and while fewer than l.workers packs are being encoded
// (one more for each packRows rows waiting) a new one begins, which
// takes the texts waiting, up to packRows rows, and then the next,
// until none wait. It returns once its texts are encoded, or ctx's error.
func (l *Local) encodePacked(ctx context.Context, ids [][]int32, out [][]float32) error {
	texts := make([]*packedText, len(ids))
	p := &l.pack
	p.mu.Lock()
	for i := range ids {
		texts[i] = &packedText{ctx: ctx, seq: sequence{ids: ids[i], out: out[i]}, done: make(chan struct{})}
		p.waiting = append(p.waiting, texts[i])
		p.rows += len(ids[i])
	}
	start := p.running < packRunners
	if start {
		p.running++
	}
	p.mu.Unlock()
	if start {
		go l.runPacks()
	}
	for _, t := range texts {
		select {
		case <-t.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return ctx.Err()
}

// runPacks encodes packs of the waiting texts until none wait, skipping
// those whose callers have given up. Before it takes a pack it yields the
// processor once: on a busy machine the goroutines already runnable, among
// them requests on their way to this packer, run first and their
// questions join the pack; on an idle one the yield returns at once.
// Without it a runner that finds its model idle starts a pack of the one
// question that woke it, and the questions a moment behind wait for the
// next (measured over 29,100 papers, 16 clients, on an Intel Xeon with
// AMX: 1.7 questions a pack without the yield, 4.3 with it).
func (l *Local) runPacks() {
	p := &l.pack
	var seqs []sequence
	for {
		runtime.Gosched()
		p.mu.Lock()
		var pack []*packedText
		rows, n := 0, 0
		for ; n < len(p.waiting); n++ {
			t := p.waiting[n]
			if len(pack) > 0 && rows+len(t.seq.ids) > packRows {
				break
			}
			p.rows -= len(t.seq.ids)
			if t.ctx.Err() != nil {
				close(t.done)
				continue
			}
			pack = append(pack, t)
			rows += len(t.seq.ids)
		}
		p.waiting = slices.Delete(p.waiting, 0, n)
		if len(pack) == 0 {
			p.running--
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		if len(pack) > 1 {
			p.shared.Add(int64(len(pack)))
		}
		seqs = seqs[:0]
		for _, t := range pack {
			seqs = append(seqs, t.seq)
		}
		busy := l.busy.Add(1)
		s, release := l.scratchFor(max(1, l.workers/int(busy)), nil)
		l.model.encode(seqs, s)
		release()
		l.busy.Add(-1)
		for _, t := range pack {
			close(t.done)
		}
	}
}
