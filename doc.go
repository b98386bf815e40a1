// Package papersearch holds the domain types every part of the service
// shares: a research paper (Paper, with the rules that give it a stable
// identity, Complete and its work keys), a filter, a hit with its
// explanation, a collection and an ingest's summary, and the one fold of
// text (Fold) by which names and titles compare. The work is done below
// it, in layers: seeds and catalog/imports read sources, catalog writes
// papers into a store (search/storage; search/sqlite or search/qdrant),
// embed turns text into vectors, search ranks the stored papers for a
// query, atlas lays out their map, api serves it all over HTTP, and
// cmd/papersearch wires them.
package papersearch
