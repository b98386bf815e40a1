package sqlite

// chunkRows is how many rows one chunk of a matrix holds, a multiple of
// scanBlock so that a first pass's block of rows never spans two chunks.
const chunkRows = 16 * scanBlock

// matrix is an append-only, row-major matrix of width-wide rows kept in
// chunks of chunkRows rows. Growing it copies at most the last chunk,
// never the rows before it: one contiguous matrix of a million 384-d
// vectors grew by copying all 1.5 GB of it, old and new held at once. A
// row once written stays where it is, so a view of it stays valid while
// the matrix grows.
type matrix[E int8 | float32] struct {
	width  int
	rows   int
	chunks [][]E // each but the last full; the last grown as rows come
}

// newMatrix returns an empty matrix of width-wide rows with room for n.
func newMatrix[E int8 | float32](width, n int) matrix[E] {
	m := matrix[E]{width: width}
	for ; n > 0; n -= chunkRows {
		m.chunks = append(m.chunks, make([]E, 0, min(n, chunkRows)*width))
	}
	return m
}

// row returns row r, its capacity its own.
func (m *matrix[E]) row(r int) []E {
	i := r % chunkRows * m.width
	return m.chunks[r/chunkRows][i : i+m.width : i+m.width]
}

// span returns rows r to r+n-1 as one slice; they lie in one chunk.
func (m *matrix[E]) span(r, n int) []E {
	i := r % chunkRows * m.width
	return m.chunks[r/chunkRows][i : i+n*m.width]
}

// spanEnd is the end of the rows from r, to at most to, that one span
// holds.
func spanEnd(r, to int) int { return min(to, (r/chunkRows+1)*chunkRows) }

// add appends a row of zeros and returns it, to be written before anyone
// else sees it.
func (m *matrix[E]) add() []E {
	c := m.rows / chunkRows
	if c == len(m.chunks) {
		m.chunks = append(m.chunks, nil)
	}
	chunk := m.chunks[c]
	if len(chunk) == cap(chunk) {
		// Grown as append would, but never past one chunk.
		grown := make([]E, len(chunk), min(max(2*cap(chunk), 64*m.width), chunkRows*m.width))
		copy(grown, chunk)
		chunk = grown
	}
	m.chunks[c] = chunk[:len(chunk)+m.width]
	m.rows++
	return m.row(m.rows - 1)
}
