package qdrant

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/papersearch/papersearch/search/storage"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// markUnavailable wraps an error that means Qdrant cannot be reached now
// (gRPC Unavailable) with storage.ErrUnavailable, so the API answers 503 with
// Retry-After instead of 500.
func markUnavailable(err *error) {
	if isUnavailable(*err) {
		*err = fmt.Errorf("%w: qdrant: %w", storage.ErrUnavailable, *err)
	}
}

// isUnavailable reports whether err, or an error it wraps, is gRPC's
// Unavailable.
func isUnavailable(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if s, ok := status.FromError(err); ok && s.Code() == codes.Unavailable {
			return true
		}
	}
	return false
}

// writeRetry bounds how long a write (and the read it starts with) is
// retried while Qdrant is unreachable, so the first write after a restart
// succeeds.
const writeRetry = 3 * time.Second

// retryUnavailable runs an idempotent call, retrying it with backoff while
// Qdrant answers Unavailable, for at most writeRetry and within ctx.
func retryUnavailable(ctx context.Context, call func() error) error {
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		err := call()
		if err != nil && !isUnavailable(err) {
			return struct{}{}, backoff.Permanent(err)
		}
		return struct{}{}, err
	}, backoff.WithBackOff(&backoff.ExponentialBackOff{InitialInterval: 50 * time.Millisecond,
		RandomizationFactor: 0.2, Multiplier: 2, MaxInterval: time.Second}),
		backoff.WithMaxElapsedTime(writeRetry))
	return err
}
