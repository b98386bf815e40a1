package embed

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"unsafe"
)

// TestWordTableGivesPagesBack: after eight goroutines embed texts at once,
// each row of the model's word embeddings they used is copied out equal to
// the weights file's and next to none of the table's pages is resident, by
// the kernel's own account (/proc/self/pagemap). Read in place, every page
// a row was on stayed, with up to 2 MiB around it; given back 64 KiB around
// the row (the fault-around window), a fifth of the table or more did.
func TestWordTableGivesPagesBack(t *testing.T) {
	m := testLocalModel(t, "e5-small-v2")
	w := &m.model.wordEmb
	if w.mapped == nil {
		t.Skip("the word embeddings are not read where the binary maps them on this machine")
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				text := fmt.Sprintf("query %d on zygotes, %d quantum transformers and graph neural zebras %d", i*g, g*7919+i, i)
				if _, err := m.Embed(context.Background(), []string{text}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	pages := len(w.mapped) / os.Getpagesize()
	if n := residentPages(t, w.mapped); n > pages/100 {
		t.Errorf("%d of the table's %d pages resident after texts were embedded, want at most %d", n, pages, pages/100)
	}
	copied := 0
	got, want := make([]float32, w.width), make([]float32, w.width)
	for i := range w.rows {
		if w.rows[i].Load() == nil {
			continue
		}
		copied++
		w.row(i, got)
		w.t.row(i, want)
		if !slices.Equal(got, want) {
			t.Fatalf("row %d: %v, the file holds %v", i, got[:4], want[:4])
		}
	}
	if copied < 100 {
		t.Fatalf("%d rows copied: the texts used fewer words than the test needs", copied)
	}
	for i := range w.rows {
		w.t.row(i, want)
	}
	if n := residentPages(t, w.mapped); n < pages/2 {
		t.Fatalf("reading every row in place made %d of %d pages resident: the count above cannot tell", n, pages)
	}
	release(w.mapped)
}

// residentPages counts the pages of b mapped into this process now.
func residentPages(t *testing.T, b []byte) int {
	t.Helper()
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	page := uintptr(os.Getpagesize())
	first := uintptr(unsafe.Pointer(unsafe.SliceData(b))) / page
	last := (uintptr(unsafe.Pointer(unsafe.SliceData(b))) + uintptr(len(b)) - 1) / page
	entries := make([]byte, 8*(last-first+1))
	if _, err := f.ReadAt(entries, int64(8*first)); err != nil {
		t.Skip(err)
	}
	n := 0
	for i := 0; i < len(entries); i += 8 {
		if binary.LittleEndian.Uint64(entries[i:])>>63 == 1 { // present
			n++
		}
	}
	return n
}
