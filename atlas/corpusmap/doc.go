// Package corpusmap serves the map of the stored papers (GET /v1/map): a
// Keeper makes it in the background from the engine's stored vectors with
// package atlas (neighbours, layout, nested clusters named by their terms),
// remakes it once enough papers have changed (search.Engine.Changes), and
// answers views of it: the papers within a filter, those written since it
// was made placed among their nearest, a search's results and a
// collection's papers lit up. It reads the engine and writes nothing.
package corpusmap
