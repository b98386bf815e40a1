package embed

import (
	"sync/atomic"
	"unsafe"
)

// mappedAtOnce bounds how much of a mapped file Linux makes resident when a
// read faults on one page of it: the aligned 64 KiB around the page (its
// fault_around_bytes), and on the Linux 6.18 measured here more where the
// page cache holds the page in a large folio (64 KiB given back, a fifth
// of a table stayed); a folio is mapped at once only within a page table's
// aligned 2 MiB.
// Reading the word embeddings where the binary maps them therefore kept
// nearly all of each model's table resident (66 MiB of the three models'
// 70 after a bench's queries), though texts use a few thousand of the
// 30,522 words.
const mappedAtOnce = 2 << 20

// wordTable is a model's word embeddings, one row a word of the
// vocabulary. Where the weights file's matrix is read in place (the
// binary's own pages), each row is copied to memory of its own the first
// time a text uses its word, and once a text's words are read the pages
// the reads made resident are given back (giveBack), so that the process
// keeps the rows of the words it has seen and no more.
type wordTable struct {
	t      tensor
	width  int                      // values a row
	mapped []byte                   // t's bytes where the binary maps them; nil when t is in memory of its own
	rows   []atomic.Pointer[uint16] // row i's copy, once made
	// read marks the aligned spans of mappedAtOnce bytes a row was read
	// from since they were last given back, span 0 the one mapped starts in.
	read []atomic.Bool
}

// newWordTable returns the table of rows of width values t holds.
func newWordTable(t tensor, width int) wordTable {
	w := wordTable{t: t, width: width}
	if t.mapped && len(t.h) > 0 {
		w.mapped = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(t.h))), 2*len(t.h))
		w.rows = make([]atomic.Pointer[uint16], len(t.h)/width)
		w.read = make([]atomic.Bool, w.span(len(w.mapped)-1)+1)
	}
	return w
}

// span is the index of the span that byte at of mapped lies in.
func (w *wordTable) span(at int) int {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(w.mapped)))
	return int((base+uintptr(at))/mappedAtOnce - base/mappedAtOnce)
}

// row widens row i into dst, exactly; len(dst) is the table's width.
func (w *wordTable) row(i int, dst []float32) {
	if w.mapped == nil {
		w.t.row(i, dst)
		return
	}
	p := w.rows[i].Load()
	if p == nil {
		p = w.copyRow(i)
	}
	halvesToFloats(dst, unsafe.Slice(p, w.width))
}

// copyRow copies row i out of the mapped file, keeps the copy unless
// another caller's came first, and marks the spans it read, whichever
// copy is kept.
func (w *wordTable) copyRow(i int) *uint16 {
	r := make([]uint16, w.width)
	from, to := 2*i*w.width, 2*(i+1)*w.width
	copy(r, w.t.h[i*w.width:(i+1)*w.width])
	w.read[w.span(from)].Store(true)
	w.read[w.span(to-1)].Store(true)
	if !w.rows[i].CompareAndSwap(nil, &r[0]) {
		return w.rows[i].Load()
	}
	return &r[0]
}

// giveBack gives back the pages of every span a row was read from since
// the last call: each read from the file marks its spans after it, and
// each mark is cleared by the give-back that follows it, so no page a
// read made resident stays. An encode calls it once its texts' words are
// read: one give-back a span however many rows of it were new.
func (w *wordTable) giveBack() {
	if w.mapped == nil {
		return
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(w.mapped)))
	first := base &^ (mappedAtOnce - 1)
	for j := range w.read {
		if !w.read[j].Swap(false) {
			continue
		}
		from := max(first+uintptr(j)*mappedAtOnce, base) - base
		to := min(first+uintptr(j+1)*mappedAtOnce, base+uintptr(len(w.mapped))) - base
		release(w.mapped[from:to])
	}
}
