package embed

import "context"

// yieldKey carries the wait of a context made by Yielding.
type yieldKey struct{}

// Yielding returns a context under which a Local encodes as background
// work: before each layer, each attention head and each slice of a dense
// layer's columns it calls wait, which returns when the work may go on
// (search.Engine's waits while a query is being answered), so that a long
// import leaves queries their latency. wait must return once ctx is done.
// Embedders whose work runs elsewhere ignore it.
func Yielding(ctx context.Context, wait func(context.Context)) context.Context {
	return context.WithValue(ctx, yieldKey{}, wait)
}

// pauseOf is the pause a Local's encode under ctx calls at its
// checkpoints, or nil for work that yields to nothing.
func pauseOf(ctx context.Context) func() {
	wait, _ := ctx.Value(yieldKey{}).(func(context.Context))
	if wait == nil {
		return nil
	}
	return func() { wait(ctx) }
}
