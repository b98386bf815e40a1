package embed

import (
	"os"
	"syscall"
	"unsafe"
)

// release gives back to the system the whole pages b (a weightsOf slice)
// spans, so they no longer count in the process's memory; a later read
// brings a page back from the binary's file. It is advice: an error is
// ignored.
func release(b []byte) {
	if len(b) == 0 {
		return
	}
	page := uintptr(os.Getpagesize())
	at := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	first := (at+page-1)&^(page-1) - at         // the offset of the first whole page
	last := (at+uintptr(len(b)))&^(page-1) - at // the end of the last
	if last <= first {
		return
	}
	syscall.Madvise(b[first:last], syscall.MADV_DONTNEED)
}
