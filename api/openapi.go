package api

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/papersearch/papersearch/embed"
)

// openAPITemplate is the OpenAPI 3.1 description of this API, less what
// depends on the running service (the embedding model's dimension), which
// openAPIFor fills in. Tests validate real requests and responses against
// the served document, and schemathesis generates requests from it.
//
//go:embed openapi.json
var openAPITemplate []byte

// openAPIFor returns the document of a service embedding with models: the
// embeddings request's dimensions may only be the first model's. keyless
// says the service takes writes without a key (no key set, listening on
// loopback): its operations then require no security, as they do not.
func openAPIFor(models []embed.ModelInfo, keyless bool) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(openAPITemplate, &doc); err != nil {
		return nil, fmt.Errorf("read the OpenAPI document: %w", err)
	}
	dims, ok := lookup(doc, "components", "schemas", "EmbeddingsRequest", "properties", "dimensions")
	if !ok {
		return nil, fmt.Errorf("the OpenAPI document has no EmbeddingsRequest dimensions")
	}
	// The index's model answers when the request names none, so its
	// dimension is the one a request may state; a request naming one model
	// of a pair leaves dimensions out.
	dims["enum"] = []any{models[0].Dim, nil}
	desc := fmt.Sprintf("%s's dimension, %d, if given.", models[0].Name, models[0].Dim)
	if len(models) > 1 {
		var parts []string
		for _, m := range models[1:] {
			parts = append(parts, fmt.Sprintf("%s (%d)", m.Name, m.Dim))
		}
		desc += " Leave it out when naming one model of the pair: " + strings.Join(parts, ", ") + "."
	}
	dims["description"] = desc
	if keyless {
		if err := dropSecurity(doc); err != nil {
			return nil, err
		}
	}
	return json.MarshalIndent(doc, "", " ")
}

// dropSecurity says of every operation that it needs no key, and says why
// in the document's description.
func dropSecurity(doc map[string]any) error {
	paths, ok := doc["paths"].(map[string]any)
	if !ok {
		return fmt.Errorf("the OpenAPI document has no paths")
	}
	for _, item := range paths {
		ops, _ := item.(map[string]any)
		for _, op := range ops {
			if o, ok := op.(map[string]any); ok {
				delete(o, "security")
			}
		}
	}
	info, ok := lookup(doc, "info")
	if !ok {
		return fmt.Errorf("the OpenAPI document has no info")
	}
	info["description"] = fmt.Sprint(info["description"]) +
		" This service has no API key set and listens on loopback: it takes writes from clients on its machine without one."
	return nil
}

// lookup follows keys through nested JSON objects.
func lookup(v map[string]any, keys ...string) (map[string]any, bool) {
	for _, k := range keys {
		next, ok := v[k].(map[string]any)
		if !ok {
			return nil, false
		}
		v = next
	}
	return v, true
}

func (s *Server) openapi(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, s.openAPI)
}
