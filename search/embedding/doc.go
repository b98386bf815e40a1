// Package embedding is how the service asks its models for vectors: a
// query's within the query deadline (recent ones remembered), a paper's
// and its abstract's sentences' as documents, with the sentences' roles
// labelled, and texts as given for /v1/embeddings. Every call is
// observed, its vectors' dimensions checked, and one circuit breaker
// decides whether the embedder is worth waiting for. The engine (package
// search) embeds queries through it; the catalog embeds what it stores.
package embedding
