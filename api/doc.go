// Package api serves papersearch over HTTP with echo: the routes of its
// OpenAPI document (api/openapi.json), each handler in the file of its
// feature, request parsing with size and cost bounds, the key, Host and
// Origin rules (guard), RFC 9457 problem+json errors from one table
// (problem.go), metrics, Atom feeds, the search page and the Model Context
// Protocol server. It reads through an Engine (search.Engine), writes
// through a Catalog (catalog.Catalog) and serves the map through a Mapper
// (corpusmap.Keeper), converting their types to the wire types of api/wire
// at its edge.
package api
