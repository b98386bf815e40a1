package api

import (
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/catalog"
)

// TestCollections: papers added to a collection over HTTP (by id, one with
// slashes and spaces too) hold its tag and are listed; its
// recommendations leave them out, each naming the members it is nearest;
// a paper marked not interested leaves the collection and is never
// recommended, counted in the listing; the DELETE routes take both back.
// Writes need the key; bad requests name their fault.
func TestCollections(t *testing.T) {
	_, papers := server(t)
	srv := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{APIKey: "k"}))
	defer srv.Close()
	key := []string{"Authorization", "Bearer k"}
	member, odd, dismissed := papers[0].ID, papers[6].ID, papers[1].ID
	longest := strings.Repeat("0", papersearch.MaxTagLength)
	tooLong := longest + "0"
	post := func(path, body string) (int, wire.CollectionChange) {
		t.Helper()
		resp, b := do(t, "POST", srv.URL+path, "application/json", body, key...)
		var out wire.CollectionChange
		json.Unmarshal(b, &out)
		return resp.StatusCode, out
	}
	if code, out := post("/v1/collections/Reading-List/papers", `{"ids":["`+member+`","`+odd+`","`+member+`"]}`); code != 200 || len(out.Updated) != 2 || out.Tag != "reading-list" {
		t.Fatalf("add: %d %+v", code, out)
	}
	defer func() { // leave the shared store as it was
		for _, id := range []string{member, odd, dismissed} {
			do(t, "DELETE", srv.URL+"/v1/collections/reading-list/papers/"+url.PathEscape(id), "", "", key...)
			do(t, "DELETE", srv.URL+"/v1/collections/reading-list/not-interested/"+url.PathEscape(id), "", "", key...)
		}
	}()
	if code, _ := post("/v1/collections/reading-list/not-interested", `{"ids":["`+dismissed+`"]}`); code != 200 {
		t.Fatalf("mark: %d", code)
	}
	var members wire.CollectionResponse
	if _, b := do(t, "GET", srv.URL+"/v1/collections/READING-list/papers", "", ""); json.Unmarshal(b, &members) != nil ||
		len(members.Papers) != 2 || len(members.NotInterested) != 1 || members.NotInterested[0].ID != dismissed {
		t.Errorf("the collection's papers: %s", b)
	}
	var cs wire.CollectionsResponse
	_, b := do(t, "GET", srv.URL+"/v1/collections", "", "")
	json.Unmarshal(b, &cs)
	found := false
	for _, c := range cs.Collections {
		if strings.HasPrefix(c.Tag, "not.") {
			t.Errorf("a mark listed as a collection: %+v", c)
		}
		if c.Tag == "reading-list" {
			found = c.Papers == 2 && c.NotInterested == 1
		}
	}
	if !found {
		t.Errorf("collections: %s", b)
	}
	resp, b := do(t, "GET", srv.URL+"/v1/collections/reading-list/recommendations?limit=4", "", "")
	var res wire.SearchResponse
	if resp.StatusCode != 200 || json.Unmarshal(b, &res) != nil || len(res.Results) != 4 {
		t.Fatalf("recommendations: %d %s", resp.StatusCode, b)
	}
	for _, h := range res.Results {
		if h.ID == member || h.ID == odd || h.ID == dismissed {
			t.Errorf("recommended %s, a member or dismissed", h.ID)
		}
		if len(h.Because) != 2 || (h.Because[0].ID != member && h.Because[0].ID != odd) || h.Because[0].Title == "" {
			t.Errorf("%s because %+v", h.ID, h.Because)
		}
	}
	if resp, b := do(t, "GET", srv.URL+"/v1/collections/reading-list/recommendations?limit=2&method=centroid&year_min=2026", "", "", "Accept", "text/csv"); resp.StatusCode != 200 ||
		!strings.HasPrefix(string(b), "rank,id,score") {
		t.Errorf("recommendations as CSV: %d %s", resp.StatusCode, b)
	}
	for _, tt := range []struct{ method, path, body, want string }{
		{"GET", "/v1/collections/nobody-here/recommendations", "", "404"},
		{"GET", "/v1/collections/reading-list/recommendations?method=svm", "", `"method"`},
		{"GET", "/v1/collections/reading-list/recommendations?method=", "", `"method"`},
		{"GET", "/v1/collections/reading-list/recommendations?colour=red", "", `"colour"`},
		{"GET", "/v1/collections/reading-list/recommendations?since=soon", "", `"since"`},
		{"GET", "/v1/collections/has%20space/recommendations", "", `"tag"`},
		{"POST", "/v1/collections/reading-list/papers", `{"ids":[]}`, `ids`},
		{"POST", "/v1/collections/reading-list/papers", `{"ids":["no-such-paper"]}`, `404`},
		{"POST", "/v1/collections/reading-list/papers", `{"ids":"x"}`, `/ids`},
		// A collection's not-interested mark is a tag too: its own tag is
		// four bytes shorter than a paper's may be.
		{"GET", "/v1/collections/" + tooLong + "/papers", "", `"tag"`},
		{"GET", "/v1/collections/" + tooLong + "/recommendations", "", `"tag"`},
		{"GET", "/v1/collections/" + tooLong + "/feed.atom", "", `"tag"`},
		{"POST", "/v1/collections/" + tooLong + "/papers", `{"ids":["` + member + `"]}`, `"tag"`},
		{"POST", "/v1/collections/" + tooLong + "/not-interested", `{"ids":["` + member + `"]}`, `"tag"`},
		{"DELETE", "/v1/collections/" + tooLong + "/not-interested/" + url.PathEscape(member), "", `"tag"`},
	} {
		resp, b := do(t, tt.method, srv.URL+tt.path, "application/json", tt.body, key...)
		if resp.StatusCode < 400 || !strings.Contains(string(b)+" "+resp.Status, tt.want) {
			t.Errorf("%s %s %s: %d %s; want an error naming %s", tt.method, tt.path, tt.body, resp.StatusCode, b, tt.want)
		}
	}
	if code, _ := post("/v1/collections/"+longest+"/not-interested", `{"ids":["`+dismissed+`"]}`); code != 200 {
		t.Errorf("mark for the longest collection tag: %d", code)
	}
	if resp, b := do(t, "GET", srv.URL+"/v1/collections/"+longest+"/papers", "", ""); resp.StatusCode != 200 || !strings.Contains(string(b), dismissed) {
		t.Errorf("the longest collection tag's papers: %d %s", resp.StatusCode, b)
	}
	if resp, b := do(t, "DELETE", srv.URL+"/v1/collections/"+longest+"/not-interested/"+url.PathEscape(dismissed), "", "", key...); resp.StatusCode != 200 {
		t.Errorf("unmark for the longest collection tag: %d %s", resp.StatusCode, b)
	}
	if resp, _ := do(t, "POST", srv.URL+"/v1/collections/reading-list/papers", "application/json", `{"ids":["`+member+`"]}`); resp.StatusCode != 401 {
		t.Errorf("add without the key: %d", resp.StatusCode)
	}
	resp, b = do(t, "DELETE", srv.URL+"/v1/collections/reading-list/papers/"+url.PathEscape(odd), "", "", key...)
	var p papersearch.Paper
	if resp.StatusCode != 200 {
		t.Errorf("remove: %d %s", resp.StatusCode, b)
	}
	if _, b := do(t, "GET", srv.URL+"/v1/papers/"+url.PathEscape(odd), "", ""); json.Unmarshal(b, &p) != nil || len(p.Tags) != 1 || p.Tags[0] != "history" {
		t.Errorf("after its removal: %s", b)
	}
	// A paper that is not here, named in the path, is the path's id at
	// fault, not a body's.
	for _, route := range []string{"papers", "not-interested"} {
		resp, b = do(t, "DELETE", srv.URL+"/v1/collections/reading-list/"+route+"/no-such-paper", "", "", key...)
		if resp.StatusCode != 404 || !strings.Contains(string(b), `"errors":[{"parameter":"id"`) {
			t.Errorf("DELETE %s of a missing paper: %d %s, want 404 naming the parameter id", route, resp.StatusCode, b)
		}
	}
}
