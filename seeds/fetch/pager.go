package fetch

import (
	"fmt"
	"io"
	"strconv"
)

// Pager hands out the items of a paged API one at a time, asking for the
// next page when the last is used up: the loop each network reader
// (arXiv, OpenReview, OpenAlex) shares. The reader keeps where the API
// stands (an offset, a cursor); Pager keeps the page and the count.
type Pager[T any] struct {
	// More fetches the next page; End reports, when no item is pending,
	// whether no page is left.
	More func() ([]T, error)
	End  func() bool
	// Limit, if positive, is the most items handed out.
	Limit int
	// Read counts the items handed out (a resumed reader starts it where
	// its last run ended).
	Read    int
	pending []T
}

// Next returns the next item and its place in the results (1-based), or
// io.EOF after the last, or More's error.
func (p *Pager[T]) Next() (T, int, error) {
	var zero T
	for len(p.pending) == 0 {
		if p.Limit > 0 && p.Read >= p.Limit || p.End() {
			return zero, 0, io.EOF
		}
		items, err := p.More()
		if err != nil {
			return zero, 0, err
		}
		if len(items) == 0 { // an empty page ends the results, whatever the API says of more
			return zero, 0, io.EOF
		}
		p.pending = items
	}
	if p.Limit > 0 && p.Read >= p.Limit {
		return zero, 0, io.EOF
	}
	it := p.pending[0]
	p.pending = p.pending[1:]
	p.Read++
	return it, p.Read, nil
}

// Position is where a reader paged by offset stands: the items handed out
// so far.
func (p *Pager[T]) Position() string { return strconv.Itoa(p.Read) }

// Seek moves a pager that has handed out nothing yet to a Position, the
// items before it counted as read, and returns the offset to ask from.
func (p *Pager[T]) Seek(pos string) (int, error) {
	n, err := strconv.Atoi(pos)
	if err != nil || n < 0 || p.Read > 0 || len(p.pending) > 0 {
		return 0, fmt.Errorf("cannot resume at %q", pos)
	}
	p.Read = n
	return n, nil
}

// Pending is how many items of the last page are not handed out yet.
func (p *Pager[T]) Pending() int { return len(p.pending) }
