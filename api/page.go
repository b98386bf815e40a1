package api

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"net/http"

	"github.com/labstack/echo/v4"
)

//go:embed web/index.html
var indexHTML []byte

// pageCSP is the search page's Content-Security-Policy. Its one inline
// script is allowed by its SHA-256 hash, not by 'unsafe-inline', so no
// other script runs: not an injected one, not a javascript: URL.
func pageCSP(html []byte) string {
	policy := "default-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; script-src"
	rest := html
	for {
		_, after, ok := bytes.Cut(rest, []byte("<script>"))
		if !ok {
			return policy
		}
		body, tail, ok := bytes.Cut(after, []byte("</script>"))
		if !ok {
			return policy
		}
		sum := sha256.Sum256(body)
		policy += " 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
		rest = tail
	}
}

// page serves the search page: one static file, no build step, no CDN.
func (s *Server) page(c echo.Context) error {
	h := c.Response().Header()
	h.Set("Content-Security-Policy", s.pageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	return c.Blob(http.StatusOK, "text/html; charset=utf-8", indexHTML)
}
