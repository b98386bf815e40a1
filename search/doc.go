// Package search ranks stored papers for a query. A Store keeps documents
// (the embedded SQLite file or Qdrant); the Engine embeds queries,
// retrieves, fuses, ranks, explains and pages, and finds similar papers,
// aspects and recommendations. It only reads: package catalog writes.
package search
