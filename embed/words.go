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
// time a text uses its word, and the pages around it are given back, so
// that the process keeps the rows of the words it has seen and no more.
type wordTable struct {
	t      tensor
	width  int                      // values a row
	mapped []byte                   // t's bytes where the binary maps them; nil when t is in memory of its own
	rows   []atomic.Pointer[uint16] // row i's copy, once made
}

// newWordTable returns the table of rows of width values t holds.
func newWordTable(t tensor, width int) wordTable {
	w := wordTable{t: t, width: width}
	if t.mapped && len(t.h) > 0 {
		w.mapped = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(t.h))), 2*len(t.h))
		w.rows = make([]atomic.Pointer[uint16], len(t.h)/width)
	}
	return w
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
// another caller's came first, and gives back the pages the read made
// resident (whichever copy is kept: every read from the file is followed
// by its caller's release); a later read of a neighbouring row brings
// them back once.
func (w *wordTable) copyRow(i int) *uint16 {
	r := make([]uint16, w.width)
	copy(r, w.t.h[i*w.width:(i+1)*w.width])
	defer w.release(i)
	if !w.rows[i].CompareAndSwap(nil, &r[0]) {
		return w.rows[i].Load()
	}
	return &r[0]
}

// release gives back the pages a read of row i made resident.
func (w *wordTable) release(i int) {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(w.mapped)))
	at := base + uintptr(2*i*w.width)
	from := max(at&^(mappedAtOnce-1), base) - base
	to := min((at+uintptr(2*w.width)+mappedAtOnce-1)&^(mappedAtOnce-1), base+uintptr(len(w.mapped))) - base
	release(w.mapped[from:to])
}
