package fetch

import (
	"errors"
	"io"
	"slices"
	"testing"
)

// TestPager: items come page by page in order with their places; a limit
// stops mid-page; a resumed count numbers on from it; an empty page ends
// the results; a page's error is returned and the next call asks again.
func TestPager(t *testing.T) {
	pages := [][]int{{1, 2, 3}, {4, 5}, {6}}
	var fail error
	pager := func(limit, read int) *Pager[int] {
		next := 0
		return &Pager[int]{Limit: limit, Read: read,
			More: func() ([]int, error) {
				if fail != nil {
					return nil, fail
				}
				next++
				return pages[next-1], nil
			},
			End: func() bool { return next == len(pages) }}
	}
	drain := func(p *Pager[int]) (items, places []int, err error) {
		for {
			it, at, err := p.Next()
			if err != nil {
				return items, places, err
			}
			items, places = append(items, it), append(places, at)
		}
	}
	if items, places, err := drain(pager(0, 0)); err != io.EOF || !slices.Equal(items, []int{1, 2, 3, 4, 5, 6}) || !slices.Equal(places, []int{1, 2, 3, 4, 5, 6}) {
		t.Errorf("all pages: %v at %v, %v", items, places, err)
	}
	if items, _, err := drain(pager(4, 0)); err != io.EOF || !slices.Equal(items, []int{1, 2, 3, 4}) {
		t.Errorf("limit 4: %v, %v", items, err)
	}
	if _, places, _ := drain(pager(0, 10)); !slices.Equal(places, []int{11, 12, 13, 14, 15, 16}) {
		t.Errorf("resumed after 10: places %v", places)
	}
	pages = [][]int{{1}, {}, {3}}
	if items, _, err := drain(pager(0, 0)); err != io.EOF || !slices.Equal(items, []int{1}) {
		t.Errorf("an empty page: %v, %v; want the results to end there", items, err)
	}
	fail = errors.New("down")
	p := pager(0, 0)
	if _, _, err := p.Next(); !errors.Is(err, fail) {
		t.Errorf("a failing page: %v", err)
	}
	fail = nil
	if it, at, err := p.Next(); err != nil || it != 1 || at != 1 {
		t.Errorf("after the failure: %d at %d, %v", it, at, err)
	}
}
