package api

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/catalog"
)

// controlText holds each kind of character papersearch.Control names.
const controlText = "NUL\x00 BEL\x07 ESC\x1b[31m red DEL\x7f NEL\u0085 CSI\u009b RLO\u202e LRE\u202a LRI\u2066 PDI\u2069 CR\r end"

// noControls fails t when s holds a control character.
func noControls(t *testing.T, what, s string) {
	t.Helper()
	if i := strings.IndexFunc(s, papersearch.Control); i >= 0 {
		t.Errorf("%s holds a control character at %d: %q", what, i, s[max(i-20, 0):min(i+20, len(s))])
	}
}

// TestControlCharactersNeverStoredOrExported: POST and PATCH store a
// paper's text without control characters; a paper stored with them (as
// before the rule) is exported as CSV and BibTeX without them.
func TestControlCharactersNeverStoredOrExported(t *testing.T) {
	base, _ := server(t)
	eng := testServer.engine
	t.Cleanup(func() {
		for _, id := range []string{"ctl-post", "ctl-raw"} {
			catalog.New(eng, catalog.Options{}).Delete(context.Background(), id)
		}
	})
	paper, _ := json.Marshal(map[string]any{"papers": []map[string]any{{"id": "ctl-post", "title": "Posted " + controlText,
		"abstract": "Tensor sketching " + controlText, "venue": "Venue " + controlText, "authors": []string{"Ada " + controlText}}}})
	open := httptest.NewServer(New(eng, catalog.New(eng, catalog.Options{}), Options{OpenWrites: true}))
	defer open.Close()
	srv := open.URL
	if resp, body := do(t, "POST", srv+"/v1/papers", "application/json", string(paper)); resp.StatusCode != 200 {
		t.Fatalf("POST: %d %s", resp.StatusCode, body)
	}
	patch, _ := json.Marshal(map[string]any{"venue": "Patched " + controlText})
	if resp, body := do(t, "PATCH", srv+"/v1/papers/ctl-post", "application/merge-patch+json", string(patch)); resp.StatusCode != 200 {
		t.Fatalf("PATCH: %d %s", resp.StatusCode, body)
	}
	got, err := eng.Get(context.Background(), "ctl-post")
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"title": got.Title, "abstract": got.Abstract, "venue": got.Venue, "authors": strings.Join(got.Authors, "|")} {
		noControls(t, "the stored "+name, v)
	}
	if !strings.Contains(got.Abstract, "ESC[31m red") || !strings.HasPrefix(got.Venue, "Patched NUL BEL") {
		t.Errorf("the visible text was not kept: %q / %q", got.Abstract, got.Venue)
	}

	// Stored as it was given (catalog.Catalog.Put writes papers as they are), as a
	// paper stored before the rule.
	raw := papersearch.Paper{ID: "ctl-raw", Title: "Raw " + controlText, Abstract: "Tensor sketching raw " + controlText,
		Venue: "Venue " + controlText, Authors: []string{"Grace " + controlText}, Year: 2024}
	if _, err := catalog.New(eng, catalog.Options{}).Put(context.Background(), []papersearch.Paper{raw}); err != nil {
		t.Fatal(err)
	}
	for _, accept := range []string{"text/csv", "application/x-bibtex"} {
		resp, body := do(t, "POST", base+"/v1/search", "application/json", `{"query":"tensor sketching","limit":5}`, "Accept", accept)
		if resp.StatusCode != 200 || !strings.Contains(string(body), "Raw NUL") {
			t.Fatalf("%s: %d %.300s", accept, resp.StatusCode, body)
		}
		noControls(t, accept+" export", strings.NewReplacer("\r\n", "\n").Replace(string(body))) // CSV's own line ends are CRLF
	}
	resp, body := do(t, "GET", base+"/v1/papers/"+url.PathEscape("ctl-raw"), "", "", "Accept", "application/x-bibtex")
	if resp.StatusCode != 200 {
		t.Fatalf("GET as BibTeX: %d %s", resp.StatusCode, body)
	}
	noControls(t, "a paper's BibTeX", string(body))

	// An alert's Atom feed.
	saved := newAlerts(t)
	feeds := httptest.NewServer(New(eng, catalog.New(eng, catalog.Options{}), Options{OpenWrites: true, Alerts: saved}))
	defer feeds.Close()
	resp, body = do(t, "POST", feeds.URL+"/v1/alerts", "application/json", `{"query":"tensor sketching raw"}`)
	var a wire.Alert
	if err := json.Unmarshal(body, &a); err != nil || resp.StatusCode != 201 {
		t.Fatalf("create an alert: %d %s", resp.StatusCode, body)
	}
	resp, body = do(t, "GET", feeds.URL+"/v1/alerts/"+a.ID+"/feed.atom", "", "")
	if resp.StatusCode != 200 || !strings.Contains(string(body), "Raw NUL") {
		t.Fatalf("the alert's feed: %d %.300s", resp.StatusCode, body)
	}
	noControls(t, "an Atom feed", string(body))
}
