// Package storage says what a store of papers is: the Store interface the
// embedded store (search/sqlite) and Qdrant (search/qdrant) implement, the
// types they trade in (Document, Sentence, Candidate, Matches,
// Fingerprint), the service's records beside the papers (Records), the
// filter rules every store applies the same way (dates, venues, authors,
// tags), the errors a store returns, and Observed: a store measured
// operation by operation, noting the papers written through it (Changes).
// The engine (package search) reads through it; the catalog writes
// through it; search/storetest checks a store against it.
package storage
