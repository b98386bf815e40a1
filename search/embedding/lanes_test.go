package embedding

import (
	"context"
	"testing"
	"time"
)

// TestLanesLeaveAProcessor: a background lane waits while a query is
// being answered; for foregroundGrace after one, at most one fewer lanes
// than processors compute at once, a lane's next checkpoint or its Done
// giving its slot back; with no query for longer none is held back; a
// lane waiting for a slot returns when its context ends.
func TestLanesLeaveAProcessor(t *testing.T) {
	m := &Models{lanes: newLanes(3)}
	ctx := context.Background()
	a, b, c := &lane{l: m.lanes}, &lane{l: m.lanes}, &lane{l: m.lanes}
	for _, x := range []*lane{a, b, c} {
		x.Wait(ctx)
		if x.held {
			t.Fatal("with no query yet a lane took a slot")
		}
	}
	stays := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
			t.Fatal(what)
		case <-time.After(50 * time.Millisecond):
		}
	}

	done := m.Foreground()
	went := make(chan struct{})
	go func() { a.Wait(ctx); close(went) }()
	stays(went, "a background lane went on while a query was being answered")
	done()
	<-went
	b.Wait(ctx)
	if !a.held || !b.held {
		t.Fatal("after a query, lanes went on without slots")
	}
	third := make(chan struct{})
	go func() { c.Wait(ctx); close(third) }()
	stays(third, "three lanes computed at once on three processors while queries come")
	a.Done()
	<-third
	if a.held || !c.held {
		t.Fatal("Done did not hand the slot on")
	}
	b.Wait(ctx) // gives its slot back and takes it again
	if !b.held || len(m.lanes.slots) != 2 {
		t.Fatalf("%d slots taken, want 2", len(m.lanes.slots))
	}

	cctx, cancel := context.WithCancel(ctx)
	d := &lane{l: m.lanes}
	gave := make(chan struct{})
	go func() { d.Wait(cctx); close(gave) }()
	stays(gave, "a third lane took a slot")
	cancel()
	<-gave
	if d.held {
		t.Fatal("a lane whose context ended holds a slot")
	}

	m.lanes.mu.Lock()
	m.lanes.last = time.Now().Add(-2 * foregroundGrace)
	m.lanes.mu.Unlock()
	b.Wait(ctx)
	c.Wait(ctx)
	if b.held || c.held || len(m.lanes.slots) != 0 {
		t.Fatalf("long after the last query %d slots are taken", len(m.lanes.slots))
	}
}

// TestLanesBoundTheWait: behind a query that never ends, background work
// waits backgroundStarved and then goes on for backgroundTurn beside it,
// holding a slot, a checkpoint within the turn not waiting; after the
// turn it waits again; a query's end lets it go at once.
func TestLanesBoundTheWait(t *testing.T) {
	m := &Models{lanes: newLanes(2)}
	ctx := context.Background()
	a := &lane{l: m.lanes}
	wait := func() time.Duration { // how long a.Wait took; at most 5 s
		t.Helper()
		begun, went := time.Now(), make(chan struct{})
		go func() { a.Wait(ctx); close(went) }()
		select {
		case <-went:
			return time.Since(begun)
		case <-time.After(5 * time.Second):
			t.Fatal("background work waited 5 s behind a query")
			return 0
		}
	}
	done := m.Foreground()
	if waited := wait(); waited < backgroundStarved {
		t.Fatalf("background work went on after %v behind a query, want %v", waited, backgroundStarved)
	}
	if !a.held {
		t.Fatal("background work took its turn beside a query without a slot")
	}
	if waited := wait(); waited >= backgroundStarved {
		t.Fatalf("a checkpoint within the turn waited %v", waited)
	}
	m.lanes.mu.Lock()
	turn := m.lanes.turn
	m.lanes.mu.Unlock()
	time.Sleep(time.Until(turn))
	begun, went := time.Now(), make(chan struct{})
	go func() { a.Wait(ctx); close(went) }()
	select {
	case <-went:
		t.Fatalf("after its turn background work went on after %v", time.Since(begun))
	case <-time.After(backgroundStarved / 4):
	}
	done()
	select {
	case <-went:
	case <-time.After(5 * time.Second):
		t.Fatal("the query ended and background work still waited")
	}
	if a.held {
		a.Done()
	}
}
