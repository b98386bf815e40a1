// Package catalog is the write side of papersearch: every paper comes into
// the store, changes and leaves it through a Catalog. It checks and tidies
// each paper (Check, papersearch.Complete), merges the versions of a work
// (an arXiv preprint and its conference paper, one DOI from two sources)
// into one paper, embeds only what is new with the engine's models, stores
// each batch whole or not at all (Add), reads sources to their end
// (Import), edits a paper in place (Update), changes tags (Retag) and
// deletes. In the service it is the only caller of a store's write methods
// (TestOnlyTheCatalogWrites); search.Engine only reads. The import jobs
// and watches of catalog/imports run their imports through it.
package catalog
