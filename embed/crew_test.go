package embed

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestCrew: each run calls every part below parts exactly once and
// returns only when all are done, whether the crew's goroutines are
// polling or have parked (a pause longer than spinIdle), and close stops
// them.
func TestCrew(t *testing.T) {
	const n = 3
	c := newCrew(n)
	var calls [n]atomic.Int64
	for round := range 40 {
		parts := 1 + round%n
		var done atomic.Int64
		c.run(parts, func(i int) {
			if i < 0 || i >= parts {
				t.Errorf("round %d: part %d of %d", round, i, parts)
				return
			}
			time.Sleep(time.Duration(i) * 50 * time.Microsecond)
			calls[i].Add(1)
			done.Add(1)
		})
		if got := done.Load(); got != int64(parts) {
			t.Fatalf("round %d: run returned after %d of %d parts", round, got, parts)
		}
		if round%10 == 9 {
			time.Sleep(2 * spinIdle) // the goroutines park
		}
	}
	c.close()
	want := [n]int64{40, 26, 13}
	for i := range n {
		if got := calls[i].Load(); got != want[i] {
			t.Errorf("part %d ran %d times, want %d", i, got, want[i])
		}
	}
}
