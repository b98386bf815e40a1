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

// TestPagerSeek: a pager that has handed out nothing moves to a position
// and counts on from it; one that has, or a position that is not a count,
// is refused; Position reads back what Seek took.
func TestPagerSeek(t *testing.T) {
	p := &Pager[int]{More: func() ([]int, error) { return []int{1}, nil }, End: func() bool { return false }}
	for _, bad := range []string{"", "x", "-1", "2.5"} {
		if _, err := p.Seek(bad); err == nil {
			t.Errorf("Seek(%q) moved", bad)
		}
	}
	if n, err := p.Seek("40"); err != nil || n != 40 || p.Position() != "40" {
		t.Fatalf("Seek(40) = %d, %v; Position %s", n, err, p.Position())
	}
	if _, at, err := p.Next(); err != nil || at != 41 {
		t.Fatalf("after Seek(40), Next is at %d (%v), want 41", at, err)
	}
	if _, err := p.Seek("3"); err == nil {
		t.Error("a pager that has handed out an item moved")
	}
}
