package storage

import (
	"maps"
	"sync"
)

// Changes notes the papers written or deleted through an Observed store
// since a point, each with the sequence number of its last write, so that
// what was made from a snapshot of the store (the corpus map) forgets only
// the writes it saw. It sees this process's writes. The zero value notes
// nothing yet.
type Changes struct {
	mu      sync.Mutex
	seq     uint64
	changed map[string]uint64 // id -> seq of its last write
	deleted map[string]uint64
}

func (w *Changes) note(ids []string, deleted bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.changed == nil {
		w.changed, w.deleted = map[string]uint64{}, map[string]uint64{}
	}
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

// Mark is the sequence number of the last write.
func (w *Changes) Mark() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seq
}

// Forget drops the writes up to mark.
func (w *Changes) Forget(mark uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, written := range []map[string]uint64{w.changed, w.deleted} {
		maps.DeleteFunc(written, func(_ string, s uint64) bool { return s <= mark })
	}
}

// Since is a copy of the changed and deleted papers, with the marks of
// their last writes.
func (w *Changes) Since() (changed, deleted map[string]uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.changed), maps.Clone(w.deleted)
}
