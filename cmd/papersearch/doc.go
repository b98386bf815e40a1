// Command papersearch serves semantic search over research-paper abstracts
// and offers the same operations on the command line: serve, mcp, ingest,
// import, watch, search, similar, recommend, reindex, eval and bench. Its
// configuration is read from PAPERSEARCH_* variables (Config); main only
// wires: it opens the store, the engine (search), the catalog (catalog),
// the map (atlas/corpusmap) and the HTTP API (api), and runs the command.
package main
