package sqlite

import (
	"slices"
	"testing"
)

// TestMatrixGrows: rows added past the room asked for, across chunks,
// keep their values; a view taken before the matrix grew still reads
// the row; a span is the rows it names.
func TestMatrixGrows(t *testing.T) {
	for _, room := range []int{0, 100, chunkRows, chunkRows + 1} {
		m := newMatrix[float32](3, room)
		var first []float32
		n := 2*chunkRows + 300
		for r := range n {
			row := m.add()
			if len(row) != 3 || cap(row) != 3 || slices.ContainsFunc(row, func(v float32) bool { return v != 0 }) {
				t.Fatalf("room %d: row %d = %v (cap %d), want 3 zeros", room, r, row, cap(row))
			}
			row[0], row[1], row[2] = float32(r), float32(-r), 1
			if r == 0 {
				first = row
			}
		}
		if m.rows != n || len(m.chunks) != 3 {
			t.Fatalf("room %d: %d rows in %d chunks, want %d in 3", room, m.rows, len(m.chunks), n)
		}
		for r := range n {
			if got := m.row(r); got[0] != float32(r) || got[1] != float32(-r) {
				t.Fatalf("room %d: row %d = %v", room, r, got)
			}
		}
		if first[0] != 0 || first[2] != 1 {
			t.Errorf("room %d: the first row's early view reads %v", room, first)
		}
		from := chunkRows - 5
		end := spanEnd(from, from+scanBlock)
		if end != chunkRows {
			t.Fatalf("spanEnd(%d, %d) = %d, want %d", from, from+scanBlock, end, chunkRows)
		}
		span := m.span(from, end-from)
		if len(span) != 15 || span[0] != float32(from) || span[12] != float32(chunkRows-1) {
			t.Errorf("room %d: span of rows %d to %d = %v", room, from, end-1, span)
		}
	}
}
