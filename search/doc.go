// Package search ranks stored papers for a query. A store (storage.Store:
// the embedded SQLite file or Qdrant) keeps the papers with their vectors;
// the Engine embeds queries, retrieves, fuses, ranks, explains and pages,
// and finds similar papers, aspects and recommendations. It only reads:
// package catalog writes, through the store the engine observes (Store).
package search
