package api

import (
	"cmp"
	"context"
	"encoding/json"
	"encoding/xml"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/alerts"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search/sqlite"
	"github.com/papersearch/papersearch/seeds"
)

// feedServer serves a store of its own: eight seed papers added now, in
// the collection "mine" the first two, and two added thirty days ago, one
// with a title full of what XML must escape.
func feedServer(t *testing.T) (url string, papers []papersearch.Paper, store *sqlite.Store) {
	t.Helper()
	ctx := context.Background()
	eng, store := emptyEngine(t)
	all, err := seeds.NeurIPS2026()
	if err != nil {
		t.Fatal(err)
	}
	papers = slices.Clone(all[:10])
	old := time.Now().Add(-30 * 24 * time.Hour).UTC().Truncate(time.Second)
	papers[8].Added, papers[9].Added = old, old.Add(time.Hour)
	papers[9].Title = `Less <than> & "quotes" ]]> in a <b>title</b>`
	papers[1].URL = "https://example.org/papers/1?a=1&b=2"
	if _, err := catalog.New(eng, catalog.Options{}).Ingest(ctx, papers, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := catalog.New(eng, catalog.Options{}).Retag(ctx, []string{papers[0].ID, papers[1].ID}, []string{"mine"}, nil); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(eng, catalog.New(eng, catalog.Options{}), Options{APIKey: "k", Alerts: alerts.New(store)}))
	t.Cleanup(srv.Close)
	return srv.URL, papers, store
}

// newAlerts keeps alerts in a store of their own, for one test.
func newAlerts(t *testing.T) *alerts.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "records.db"), embed.ModelInfo{Name: "records", Dim: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return alerts.New(st)
}

// readFeed fetches and reads a feed, failing the test unless it is an
// Atom feed document (checkAtom).
func readFeed(t *testing.T, url string) (atomFeed, []byte) {
	t.Helper()
	resp, b := do(t, "GET", url, "", "")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), MediaAtom) {
		t.Fatalf("GET %s: %d %s %s", url, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	if err := checkAtom(b); err != nil {
		t.Fatalf("GET %s: not an Atom feed document as RFC 4287 requires: %v\n%s", url, err, b)
	}
	var f atomFeed
	if err := xml.Unmarshal(b, &f); err != nil {
		t.Fatalf("GET %s: not XML: %v\n%s", url, err, b)
	}
	return f, b
}

// TestCollectionFeed: a collection's feed lists, newest first, the papers
// added within its window that its recommendations rank, never its
// members; each entry says which members it is near and keeps its id
// from one reading to the next; a reader holding the document gets 304.
func TestCollectionFeed(t *testing.T) {
	url, papers, _ := feedServer(t)
	f, body := readFeed(t, url+"/v1/collections/mine/feed.atom?limit=50")
	if len(f.Entries) != 6 { // the eight added now, less the two members
		t.Fatalf("%d entries, want 6:\n%s", len(f.Entries), body)
	}
	if !strings.HasPrefix(f.ID, "urn:uuid:") || f.Updated == "" || f.Title == "" || len(f.Links) != 1 || f.Links[0].Rel != "self" {
		t.Errorf("feed head: %+v", f)
	}
	for i, e := range f.Entries {
		if !strings.HasPrefix(e.ID, "urn:uuid:") || e.Title == "" || e.Content == nil || e.Content.Text == "" {
			t.Errorf("entry %d: %+v", i, e)
		}
		if e.Title == papers[0].Title || e.Title == papers[1].Title {
			t.Errorf("entry %d is a member: %q", i, e.Title)
		}
		if !strings.Contains(e.Summary, "because you have") || !strings.Contains(e.Summary, papers[0].Title) && !strings.Contains(e.Summary, papers[1].Title) {
			t.Errorf("entry %d says %q", i, e.Summary)
		}
		if i > 0 && e.Updated > f.Entries[i-1].Updated {
			t.Errorf("entry %d (%s) is newer than the one before it (%s)", i, e.Updated, f.Entries[i-1].Updated)
		}
	}
	again, _ := readFeed(t, url+"/v1/collections/mine/feed.atom?limit=50")
	if again.ID != f.ID || again.Entries[0].ID != f.Entries[0].ID {
		t.Errorf("ids changed between readings: %s %s, then %s %s", f.ID, f.Entries[0].ID, again.ID, again.Entries[0].ID)
	}
	month, _ := readFeed(t, url+"/v1/collections/mine/feed.atom?limit=50&window=5w")
	if len(month.Entries) != 8 {
		t.Errorf("a five-week window lists %d entries, want 8", len(month.Entries))
	}
	resp, _ := do(t, "GET", url+"/v1/collections/mine/feed.atom?limit=50", "", "")
	etag := resp.Header.Get("ETag")
	for _, held := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		if resp, b := do(t, "GET", url+"/v1/collections/mine/feed.atom?limit=50", "", "", "If-None-Match", held); resp.StatusCode != 304 || len(b) != 0 || resp.Header.Get("ETag") != etag {
			t.Errorf("If-None-Match %s: %d, ETag %q, %d bytes, want 304 with the ETag", held, resp.StatusCode, resp.Header.Get("ETag"), len(b))
		}
	}
	if resp, _ := do(t, "GET", url+"/v1/collections/mine/feed.atom?limit=50", "", "", "If-None-Match", `"other"`); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != MediaAtom+"; charset=utf-8" {
		t.Errorf("If-None-Match of another document: %d %q, want 200 Atom", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, tt := range []struct {
		held string
		want int
	}{
		{etag, 200}, {"*", 200}, {`"a,b", ` + etag, 200}, {`"other"`, 412}, {"W/" + etag, 412}, {"garbage", 412}, {`"unclosed`, 412},
	} { // If-Match compares strongly; a failed one is a problem, not an empty 412
		resp, b := do(t, "GET", url+"/v1/collections/mine/feed.atom?limit=50", "", "", "If-Match", tt.held)
		if resp.StatusCode != tt.want {
			t.Errorf("If-Match %s: %d, want %d", tt.held, resp.StatusCode, tt.want)
			continue
		}
		if tt.want == 412 && (!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") || !strings.Contains(string(b), `"status":412`) || !strings.Contains(string(b), strings.Trim(etag, `"`))) {
			t.Errorf("If-Match %s: %q %s, want a problem naming the ETag", tt.held, resp.Header.Get("Content-Type"), b)
		}
	}
	for _, rng := range []string{"bytes=99999999-", "bytes=0-9"} { // a feed is sent whole
		if resp, b := do(t, "GET", url+"/v1/collections/mine/feed.atom?limit=50", "", "", "Range", rng); resp.StatusCode != 200 || !strings.Contains(string(b), "</feed>") || resp.Header.Get("Accept-Ranges") != "" {
			t.Errorf("Range %s: %d, %d bytes, Accept-Ranges %q, want the whole feed and no ranges offered", rng, resp.StatusCode, len(b), resp.Header.Get("Accept-Ranges"))
		}
	}
	for _, tt := range []struct{ path, want string }{
		{"/v1/collections/nobody/feed.atom", "404"},
		{"/v1/collections/mine/feed.atom?window=7x", `"window"`},
		{"/v1/collections/mine/feed.atom?window=", `"window"`},
		{"/v1/collections/mine/feed.atom?window=400d", `"window"`},
		{"/v1/collections/mine/feed.atom?since=2026-01-01", `"since"`},
		{"/v1/collections/mine/feed.atom?limit=101", `"limit"`},
		{"/v1/collections/mine/feed.atom?method=svm", `"method"`},
	} {
		resp, b := do(t, "GET", url+tt.path, "", "")
		if resp.StatusCode < 400 || !strings.Contains(string(b)+" "+resp.Status, tt.want) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
			t.Errorf("GET %s: %d %s; want a problem naming %s", tt.path, resp.StatusCode, b, tt.want)
		}
	}
}

// TestAlerts: a saved search is made with the key, answers its feed's URL,
// which any reader fetches without one, is kept across a restart, and is
// gone once deleted; bad requests name their fault.
func TestAlerts(t *testing.T) {
	url, _, store := feedServer(t)
	key := []string{"Authorization", "Bearer k"}
	resp, b := do(t, "POST", url+"/v1/alerts", "application/json", `{"query":"diffusion models for images","window":"5w","limit":1}`, key...)
	var a wire.Alert
	if resp.StatusCode != 201 || json.Unmarshal(b, &a) != nil || a.ID == "" || resp.Header.Get("Location") != "/v1/alerts/"+a.ID ||
		a.FeedURL != url+"/v1/alerts/"+a.ID+"/feed.atom" || a.Window != "5w" || a.Limit != 1 {
		t.Fatalf("POST /v1/alerts: %d %s", resp.StatusCode, b)
	}
	f, _ := readFeed(t, a.FeedURL)
	if len(f.Entries) != 1 || !strings.Contains(f.Entries[0].Summary, "Matches “diffusion models for images”") {
		t.Errorf("the alert's feed: %+v", f.Entries)
	}
	// A question no paper here answers (none is about proteins) lists
	// nothing: the papers under the relevance floor are left out, however
	// new.
	resp, b = do(t, "POST", url+"/v1/alerts", "application/json", `{"query":"protein folding with diffusion models","window":"5w"}`, key...)
	var none wire.Alert
	if resp.StatusCode != 201 || json.Unmarshal(b, &none) != nil {
		t.Fatalf("POST /v1/alerts: %d %s", resp.StatusCode, b)
	}
	if f, _ := readFeed(t, none.FeedURL); len(f.Entries) != 0 {
		t.Errorf("the feed of a question nothing here answers: %d entries, first %q", len(f.Entries), f.Entries[0].Summary)
	}
	if resp, _ := do(t, "DELETE", url+"/v1/alerts/"+none.ID, "", "", key...); resp.StatusCode != 204 {
		t.Errorf("DELETE: %d", resp.StatusCode)
	}
	// Kept in the store: another server on it, or the next start, answers it.
	reopened := alerts.New(store)
	if kept, err := reopened.Get(context.Background(), a.ID); err != nil || kept.Query != a.Query || kept.Limit != 1 {
		t.Errorf("after a restart: %+v %v", kept, err)
	}
	var list wire.AlertsResponse
	if _, b := do(t, "GET", url+"/v1/alerts", "", "", key...); json.Unmarshal(b, &list) != nil || len(list.Alerts) != 1 || list.Alerts[0].FeedURL != a.FeedURL {
		t.Errorf("GET /v1/alerts: %s", b)
	}
	if resp, _ := do(t, "GET", url+"/v1/alerts", "", ""); resp.StatusCode != 401 {
		t.Errorf("listing without the key: %d", resp.StatusCode)
	}
	for _, tt := range []struct{ body, want string }{
		{`{}`, `/query`},
		{`{"query":"x","collection":"mine"}`, `/query`},
		{`{"collection":"has space"}`, `/collection`},
		{`{"query":"x","window":"7x"}`, `/window`},
		{`{"query":"x","limit":0}`, `/limit`},
		{`{"query":"x","filters":{"since":"2026-01-01"}}`, `/filters/since`},
		{`{"query":"x","filters":{"year_min":99999}}`, `/filters/year_min`},
		{`{"query":"x","colour":"red"}`, `colour`},
		{`{"query":"x","window":""}`, `/window`},
		{`{"query":"x","filters":{"by":""}}`, `/filters/by`},
	} {
		resp, b := do(t, "POST", url+"/v1/alerts", "application/json", tt.body, key...)
		if resp.StatusCode != 400 || !strings.Contains(string(b), tt.want) {
			t.Errorf("POST %s: %d %s; want 400 naming %s", tt.body, resp.StatusCode, b, tt.want)
		}
	}
	resp, b = do(t, "POST", url+"/v1/alerts", "application/json", `{"collection":"not-yet"}`, key...)
	var later wire.Alert
	if resp.StatusCode != 201 || json.Unmarshal(b, &later) != nil {
		t.Errorf("an alert for a collection no paper holds yet: %d %s", resp.StatusCode, b)
	}
	if f, _ := readFeed(t, later.FeedURL); len(f.Entries) != 0 {
		t.Errorf("its feed, before any paper holds the collection: %+v", f.Entries)
	}
	if resp, _ := do(t, "GET", a.FeedURL+"?limit=5", "", ""); resp.StatusCode != 400 {
		t.Errorf("an alert's feed with a parameter: %d", resp.StatusCode)
	}
	if resp, _ := do(t, "DELETE", url+"/v1/alerts/"+a.ID, "", "", key...); resp.StatusCode != 204 {
		t.Errorf("DELETE: %d", resp.StatusCode)
	}
	if resp, _ := do(t, "GET", a.FeedURL, "", ""); resp.StatusCode != 404 {
		t.Errorf("a deleted alert's feed: %d", resp.StatusCode)
	}
}

// TestFeedReadByFeedparser: Python's feedparser, which nobody here wrote,
// reads a feed as well-formed Atom 1.0 and finds in it what papersearch
// stored: every entry's id, title (with what XML must escape), link,
// authors, summary and date.
func TestFeedReadByFeedparser(t *testing.T) {
	if exec.Command("python3", "-c", "import feedparser").Run() != nil {
		testenv.Missing(t, "python3 with feedparser is not installed (scripts/test installs it: pip install 'feedparser==6.*')")
	}
	url, papers, _ := feedServer(t)
	f, body := readFeed(t, url+"/v1/collections/mine/feed.atom?window=5w&limit=50")
	file := filepath.Join(t.TempDir(), "feed.atom")
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("python3", "-c", `
import json, sys, feedparser
d = feedparser.parse(sys.argv[1])
print(json.dumps({"bozo": d.bozo, "error": str(d.get("bozo_exception", "")), "version": d.version,
  "id": d.feed.get("id"), "self": [l.href for l in d.feed.links if l.rel == "self"],
  "entries": [{"id": e.id, "title": e.title, "title_type": e.title_detail.type, "link": e.link,
    "authors": [a.name for a in e.get("authors", [])], "summary": e.summary,
    "updated": list(e.updated_parsed)[:6], "content": e.content[0].value} for e in d.entries]}))
`, file).CombinedOutput()
	if err != nil {
		t.Fatalf("feedparser: %v\n%s", err, out)
	}
	var got struct {
		Bozo    bool   `json:"bozo"`
		Error   string `json:"error"`
		Version string `json:"version"`
		ID      string `json:"id"`
		Entries []struct {
			ID, Title, TitleType, Link, Summary, Content string
			Authors                                      []string
			Updated                                      []int
		} `json:"entries"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Bozo || got.Version != "atom10" || got.ID != f.ID || len(got.Entries) != len(f.Entries) {
		t.Fatalf("feedparser read bozo=%v (%s), version %q, id %q, %d entries; want a well-formed atom10 feed %q of %d", got.Bozo, got.Error, got.Version, got.ID, len(got.Entries), f.ID, len(f.Entries))
	}
	byTitle := map[string]papersearch.Paper{}
	for _, p := range papers {
		byTitle[p.Title] = p
	}
	hostile := false
	for i, e := range got.Entries {
		p, ok := byTitle[e.Title]
		if !ok || e.ID != f.Entries[i].ID || e.Summary != f.Entries[i].Summary || e.Content != p.Abstract ||
			!slices.Equal(e.Authors, p.Authors) || len(e.Updated) != 6 || e.Link != cmp.Or(p.URL, url+"/#paper="+neturl.QueryEscape(p.ID)) {
			t.Errorf("entry %d as feedparser read it: %+v", i, e)
		}
		hostile = hostile || e.Title == papers[9].Title
	}
	if !hostile {
		t.Errorf("the title %q did not come back whole", papers[9].Title)
	}
	if !slices.ContainsFunc(got.Entries, func(e struct {
		ID, Title, TitleType, Link, Summary, Content string
		Authors                                      []string
		Updated                                      []int
	}) bool {
		return strings.Contains(e.Link, "/#paper=")
	}) {
		t.Errorf("no entry of a paper without a url, linked to the page's view of it")
	}
}

// TestWhyInWords: a feed entry's reason quotes the question and the
// members' titles as stored (a backslash and a quotation mark stay one
// character each, as a feed reader shows them) and ends with one full
// stop, whether or not the best sentence brings its own.
func TestWhyInWords(t *testing.T) {
	alert := feedSpec{Query: `"sharp" bounds for $\ell_1$ regression`}
	hit := papersearch.Hit{Explanation: &papersearch.Explanation{MatchedTerms: []string{"sharp", "bounds"},
		BestSentence: "We prove sharp bounds in this setting 881."}}
	if got, want := why(alert, hit), `Matches “"sharp" bounds for $\ell_1$ regression” (words: sharp, bounds): We prove sharp bounds in this setting 881.`; got != want {
		t.Errorf("alert: %s\nwant %s", got, want)
	}
	hit.Explanation.BestSentence = "Do bounds hold?"
	if got := why(alert, hit); !strings.HasSuffix(got, ": Do bounds hold?") {
		t.Errorf("a question as the best sentence: %s", got)
	}
	if got, want := why(feedSpec{Query: "bounds"}, papersearch.Hit{}), "Matches “bounds”."; got != want {
		t.Errorf("no explanation: %s, want %s", got, want)
	}
	rec := papersearch.Hit{Because: []papersearch.Neighbour{{Title: `On \emph{the} "zeta" function`, Similarity: 0.8234}}}
	if got, want := why(feedSpec{Tag: "ml"}, rec), `Recommended for ml because you have “On \emph{the} "zeta" function” (0.82).`; got != want {
		t.Errorf("collection: %s\nwant %s", got, want)
	}
}
