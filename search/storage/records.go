package storage

import "context"

// Records is where the service keeps its own state beside the papers:
// small documents (JSON) of a kind ("alert", "service") by id, in the store
// the service is configured with, so every process that opens it (any
// number of servers, the command line) sees the same alerts and keys.
// Both stores keep records: the embedded one in its file, Qdrant in a
// collection of its own beside the papers'.
type Records interface {
	// PutRecord keeps doc as the record of that kind and id, replacing
	// any; it returns once the record is durable.
	PutRecord(ctx context.Context, kind, id string, doc []byte) error
	// GetRecord returns the record of that kind and id, or an error
	// wrapping ErrNotFound.
	GetRecord(ctx context.Context, kind, id string) ([]byte, error)
	// ListRecords returns every record of a kind, by id.
	ListRecords(ctx context.Context, kind string) (map[string][]byte, error)
	// DeleteRecord removes the record of that kind and id; removing an
	// absent one returns an error wrapping ErrNotFound.
	DeleteRecord(ctx context.Context, kind, id string) error
}
