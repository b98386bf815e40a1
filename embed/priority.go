package embed

import "context"

// A Lane is one goroutine's place in background work (see Yielding).
type Lane interface {
	// Wait returns when the goroutine's work may go on; it must return
	// once ctx is done.
	Wait(ctx context.Context)
	// Done says the goroutine's work has ended: it waits no more.
	Done()
}

// laneKey carries the lanes of a context made by Yielding.
type laneKey struct{}

// Yielding returns a context under which a Local encodes as background
// work: each goroutine of an encode takes a Lane from lane, calls its
// Wait before each layer, each attention head and each slice of a dense
// layer's columns, and its Done when it ends, so that whoever hands out
// the lanes decides when background work runs and how much of it at once
// (search.Engine's hold it while a query is being answered), and a long
// import leaves queries their latency. Embedders whose work runs
// elsewhere ignore it.
func Yielding(ctx context.Context, lane func() Lane) context.Context {
	return context.WithValue(ctx, laneKey{}, lane)
}

// laneOf returns what hands out the lanes of a Local's encode under ctx,
// or nil for work that yields to nothing.
func laneOf(ctx context.Context) func() Lane {
	lane, _ := ctx.Value(laneKey{}).(func() Lane)
	return lane
}
