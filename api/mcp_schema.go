package api

import (
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/catalog/imports"
	"github.com/papersearch/papersearch/search"
)

// toolInput is the input schema of an MCP tool taking In: inferred from
// In's fields and their descriptions, with the choices the engine takes
// (constrainInput), so that an assistant sees them before it calls.
func toolInput[In any]() *jsonschema.Schema {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: the input schema of %T: %v", *new(In), err)) // a type this package declares
	}
	constrainInput(s)
	return s
}

// constrainInput adds to s's properties, at any depth, the choices the
// engine takes for the fields of those names: the same modes, aspects
// and methods the HTTP API's requests are checked against. Ranges and
// lengths stay in the descriptions ("1 to 100"): the SDK's message for a
// number out of a schema's range ("minimum: 0/1 is less than 1.000000")
// says less than the engine's own, and its message for a string too long
// repeats the whole string.
func constrainInput(s *jsonschema.Schema) {
	for name, p := range s.Properties {
		switch name {
		case "mode":
			p.Enum = enumOf(p, search.Hybrid, search.Dense, search.Lexical)
		case "aspect":
			p.Enum = enumOf(p, search.BackgroundAspect, search.MethodAspect, search.ResultAspect)
		case "method":
			p.Enum = enumOf(p, search.RecommendMethods()...)
		}
		constrainInput(p)
	}
}

// importInput is the import tool's input schema: POST /v1/imports's
// request, each field described, its source one of those the API takes.
func importInput() *jsonschema.Schema {
	s := toolInput[wire.ImportRequest]()
	network, upload := imports.NetworkSources(), imports.UploadSources()
	for name, desc := range map[string]string{
		"source":  "where the papers come from: " + imports.Names(network) + " (asked for target), or " + imports.Names(upload) + " (a file, in content)",
		"target":  "what a network source is asked for: a query for arxiv, a filter for openalex (such as concepts.id:C154945302), a venue id for openreview (such as NeurIPS.cc/2026/Conference)",
		"content": "the file of a " + imports.Names(upload) + " import, whole",
		"max":     "at most this many papers from arxiv or openalex (default 1000)",
		"tags":    "collections (tags) every imported paper joins",
	} {
		if p := s.Properties[name]; p != nil {
			p.Description = desc
		}
	}
	if p := s.Properties["source"]; p != nil {
		p.Enum = enumOf(p, slices.Concat(network, upload)...)
	}
	return s
}

// enumOf lists values as the JSON strings a property p takes, null too
// when p may be null.
func enumOf[S ~string](p *jsonschema.Schema, values ...S) []any {
	out := make([]any, 0, len(values)+1)
	for _, v := range values {
		out = append(out, string(v))
	}
	if slices.Contains(p.Types, "null") {
		out = append(out, nil)
	}
	return out
}
