package api

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
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

// openAPIFor returns the document of a service embedding with model: the
// embeddings request's dimensions may only be the model's.
func openAPIFor(models []embed.ModelInfo) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(openAPITemplate, &doc); err != nil {
		return nil, fmt.Errorf("read the OpenAPI document: %w", err)
	}
	dims, ok := lookup(doc, "components", "schemas", "EmbeddingsRequest", "properties", "dimensions")
	if !ok {
		return nil, fmt.Errorf("the OpenAPI document has no EmbeddingsRequest dimensions")
	}
	enum := []any{}
	var each []string
	for _, m := range models {
		if !slices.Contains(enum, any(m.Dim)) {
			enum = append(enum, m.Dim)
		}
		each = append(each, fmt.Sprintf("%s: %d", m.Name, m.Dim))
	}
	dims["enum"] = append(enum, nil)
	dims["description"] = fmt.Sprintf("The model's dimension, if given (%s).", strings.Join(each, "; "))
	return json.MarshalIndent(doc, "", " ")
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
