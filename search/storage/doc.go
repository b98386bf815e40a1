// Package storage says what a store of papers is: the Store interface the
// embedded store (search/sqlite) and Qdrant (search/qdrant) implement, the
// types they trade in (Document, Sentence, Candidate, Matches,
// Fingerprint), the service's records beside the papers (Records), the
// filter rules every store applies the same way (dates, venues, authors,
// tags) and the errors a store returns. The engine (package search) reads
// through it; the catalog writes through it; search/storetest checks a
// store against it.
package storage
