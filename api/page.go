package api

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

//go:embed web/index.html
var indexHTML []byte

// page serves the search page: one static file, no build step, no CDN.
func (s *Server) page(c echo.Context) error {
	h := c.Response().Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'")
	h.Set("X-Content-Type-Options", "nosniff")
	return c.Blob(http.StatusOK, "text/html; charset=utf-8", indexHTML)
}
