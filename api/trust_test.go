package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/catalog"
)

// writeRoutes are a write of every kind, with a valid JSON body; the
// guard refuses each before its handler runs.
var writeRoutes = []struct{ method, path, body string }{
	{"POST", "/v1/papers", `{"papers":[{"id":"%s","abstract":"replaced cross-site"}]}`},
	{"PATCH", "/v1/papers/%s", `{"abstract":"replaced cross-site"}`},
	{"DELETE", "/v1/papers/%s", ``},
	{"POST", "/v1/collections/evil/papers", `{"ids":["%s"]}`},
	{"POST", "/v1/watches", `{"source":"arxiv","target":"cat:cs.LG"}`},
	{"POST", "/v1/imports", `{"source":"bibtex","content":"@article{a, title={T}, abstract={A}}"}`},
	{"POST", "/v1/alerts", `{"query":"graphs"}`},
	{"POST", "/v1/embeddings", `{"input":"burn the cores"}`},
	{"POST", "/v1/search", `{"query":"graphs"}`},
	{"POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
}

// TestCrossSiteWritesRefused: a page of another site can send a form or
// text/plain body, or JSON with its Origin, with no preflight; every write
// route refuses each (415, 403), with or without an API key, and the seed
// paper stays as it was. Programs (no Origin) and the service's own page
// (Sec-Fetch-Site: same-origin) still write.
func TestCrossSiteWritesRefused(t *testing.T) {
	_, papers := server(t)
	eng := testServer.engine
	id := papers[0].ID
	before, err := eng.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	untag(t, []string{id}, "trust-test", "evil")
	tags, _ := json.Marshal(before.Tags)
	for _, cfg := range []struct {
		name string
		opts Options
		auth []string
	}{
		{"keyless loopback", Options{OpenWrites: true}, nil},
		{"keyed", Options{APIKey: "k"}, []string{"Authorization", "Bearer k"}},
	} {
		srv := httptest.NewServer(New(eng, catalog.New(eng, catalog.Options{}), cfg.opts))
		for _, rt := range writeRoutes {
			path, body := strings.ReplaceAll(rt.path, "%s", id), strings.ReplaceAll(rt.body, "%s", id)
			for _, try := range []struct {
				name, contentType string
				headers           []string
				status            int
			}{
				{"form-typed JSON", "application/x-www-form-urlencoded", nil, 415},
				{"text/plain JSON", "text/plain", nil, 415},
				{"multipart", "multipart/form-data; boundary=x", nil, 415},
				{"JSON from another origin", "application/json", []string{"Origin", "http://evil.example"}, 403},
				{"JSON from another port of loopback", "application/json", []string{"Origin", "http://127.0.0.1:1"}, 403},
				{"form from another origin", "application/x-www-form-urlencoded", []string{"Origin", "http://evil.example"}, 403},
				{"Sec-Fetch-Site cross-site", "application/json", []string{"Sec-Fetch-Site", "cross-site"}, 403},
				{"Sec-Fetch-Site same-site", "application/json", []string{"Sec-Fetch-Site", "same-site"}, 403},
			} {
				if rt.body == "" && try.contentType == "multipart/form-data; boundary=x" {
					continue
				}
				resp, got := do(t, rt.method, srv.URL+path, try.contentType, body, append(try.headers, cfg.auth...)...)
				if resp.StatusCode != try.status || resp.Header.Get("Content-Type") != "application/problem+json" {
					t.Errorf("%s: %s %s, %s: %d %.200s, want %d problem+json", cfg.name, rt.method, rt.path, try.name, resp.StatusCode, got, try.status)
				}
			}
		}
		after, err := eng.Get(context.Background(), id)
		if err != nil || after.Abstract != before.Abstract {
			t.Fatalf("%s: the paper was changed or removed: %q %v", cfg.name, after.Abstract, err)
		}
		// The service's own page and programs write as before.
		for _, headers := range [][]string{nil, {"Sec-Fetch-Site", "same-origin", "Origin", srv.URL}, {"Origin", srv.URL}} {
			resp, got := do(t, "POST", srv.URL+"/v1/collections/trust-test/papers", "application/json; charset=utf-8",
				`{"ids":["`+id+`"]}`, append(headers, cfg.auth...)...)
			if resp.StatusCode != 200 {
				t.Errorf("%s: a same-origin or program write with %v: %d %s", cfg.name, headers, resp.StatusCode, got)
			}
		}
		resp, got := do(t, "PATCH", srv.URL+"/v1/papers/"+id, "application/merge-patch+json", `{"tags":`+string(tags)+`}`, cfg.auth...)
		if resp.StatusCode != 200 {
			t.Errorf("%s: PATCH as merge-patch: %d %s", cfg.name, resp.StatusCode, got)
		}
		srv.Close()
	}
}

// TestHostChecked: a Host the service does not answer for gets 421 (a DNS
// rebinding page's requests carry its own name), on reads and writes;
// loopback names and addresses, the allowed hosts and the public URL's
// host are answered.
func TestHostChecked(t *testing.T) {
	_, papers := server(t)
	trust, err := NewTrust("https://papers.example.org/ps", []string{"search.lab.example", "*.corp.example", "10.0.0.0/8"}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	plain := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{OpenWrites: true}))
	defer plain.Close()
	allowing := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{OpenWrites: true, Trust: trust}))
	defer allowing.Close()
	get := "/v1/papers/" + papers[1].ID
	for _, tt := range []struct {
		host          string
		plain, allows int
	}{
		{"attacker.example:8080", 421, 421},
		{"attacker.example", 421, 421},
		{"localhost.attacker.example", 421, 421},
		{"127.0.0.1.nip.io", 421, 421},
		{"192.168.1.20:8080", 421, 421},
		{"localhost:8080", 200, 200},
		{"LOCALHOST", 200, 200},
		{"app.localhost", 200, 200},
		{"127.0.0.1", 200, 200},
		{"127.8.9.10:80", 200, 200},
		{"[::1]:8080", 200, 200},
		{"papers.example.org", 421, 200},
		{"papers.example.org.", 421, 200},
		{"search.lab.example:443", 421, 200},
		{"a.b.corp.example", 421, 200},
		{"corp.example", 421, 421},
		{"10.1.2.3:8080", 421, 200},
	} {
		for _, srv := range []struct {
			url  string
			want int
		}{{plain.URL, tt.plain}, {allowing.URL, tt.allows}} {
			resp, body := do(t, "GET", srv.url+get, "", "", "Host", tt.host)
			if resp.StatusCode != srv.want {
				t.Errorf("GET with Host %q: %d %.200s, want %d", tt.host, resp.StatusCode, body, srv.want)
			}
		}
	}
	// The rebinding page's delete is refused before it reaches the store.
	resp, body := do(t, "DELETE", plain.URL+"/v1/papers/"+papers[1].ID, "", "", "Host", "attacker.example:8080")
	if resp.StatusCode != 421 || !strings.Contains(string(body), "attacker.example") {
		t.Errorf("DELETE with a foreign Host: %d %s", resp.StatusCode, body)
	}
	if _, err := testServer.engine.Get(context.Background(), papers[1].ID); err != nil {
		t.Errorf("the paper is gone: %v", err)
	}
	for _, bad := range [][]string{{"ftp://x"}, {"https://"}, {"https://x/?q=1"}} {
		if _, err := NewTrust(bad[0], nil, nil, ""); err == nil {
			t.Errorf("public URL %q accepted", bad[0])
		}
	}
	if _, err := NewTrust("", []string{"evil.example:80"}, nil, ""); err == nil {
		t.Error("an allowed host with a port was accepted")
	}
	if _, err := NewTrust("", nil, []string{"not-an-address"}, ""); err == nil {
		t.Error("a trusted proxy that is no address was accepted")
	}
}

// TestLinksIgnoreHost: an alert's feed_url and an Atom feed's links come
// from the public URL, else from the address the connection arrived at,
// never from the request's Host.
func TestLinksIgnoreHost(t *testing.T) {
	server(t)
	for _, public := range []string{"", "https://papers.example.org/ps/"} {
		trust, err := NewTrust(public, []string{"*"}, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		saved := newAlerts(t)
		srv := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{OpenWrites: true, Trust: trust, Alerts: saved}))
		want := srv.URL
		if public != "" {
			want = "https://papers.example.org/ps"
		}
		resp, body := do(t, "POST", srv.URL+"/v1/alerts", "application/json", `{"query":"graph neural networks"}`, "Host", "evil.example")
		var a wire.Alert
		if err := json.Unmarshal(body, &a); resp.StatusCode != 201 || err != nil {
			t.Fatalf("create an alert: %d %s", resp.StatusCode, body)
		}
		if !strings.HasPrefix(a.FeedURL, want+"/v1/alerts/") {
			t.Errorf("public URL %q: feed_url %q, want it under %s", public, a.FeedURL, want)
		}
		resp, body = do(t, "GET", srv.URL+"/v1/alerts/"+a.ID+"/feed.atom", "", "", "Host", "evil.example")
		if resp.StatusCode != 200 || strings.Contains(string(body), "evil.example") || !strings.Contains(string(body), want+"/v1/alerts/"+a.ID+"/feed.atom") {
			t.Errorf("public URL %q: the feed names evil.example or not %s: %d %.600s", public, want, resp.StatusCode, body)
		}
		srv.Close()
	}
}

// TestTrustedProxies: through a trusted proxy the client is the address it
// forwards, for the key rule and the rate limit; from any other peer the
// forwarding headers change nothing.
func TestTrustedProxies(t *testing.T) {
	_, papers := server(t)
	proxied, err := NewTrust("", nil, []string{"127.0.0.1", "::1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	proxiedRFC, err := NewTrust("", nil, []string{"127.0.0.1", "::1"}, "forwarded")
	if err != nil {
		t.Fatal(err)
	}
	elsewhere, err := NewTrust("", nil, []string{"192.0.2.0/24"}, "") // not the test's peer
	if err != nil {
		t.Fatal(err)
	}
	untag(t, []string{papers[0].ID}, "proxy-test")
	behind := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{OpenWrites: true, Trust: proxied}))
	defer behind.Close()
	behindRFC := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{OpenWrites: true, Trust: proxiedRFC}))
	defer behindRFC.Close()
	direct := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{OpenWrites: true, Trust: elsewhere}))
	defer direct.Close()
	write := func(base string, headers ...string) int {
		t.Helper()
		resp, body := do(t, "POST", base+"/v1/collections/proxy-test/papers", "application/json", `{"ids":["`+papers[0].ID+`"]}`, headers...)
		if resp.StatusCode == 403 && !strings.Contains(string(body), "PAPERSEARCH_API_KEY") {
			t.Errorf("a refused write does not say to set the key: %s", body)
		}
		return resp.StatusCode
	}
	for _, tt := range []struct {
		name           string
		rfc            bool // the proxy writes Forwarded, not X-Forwarded-For
		headers        []string
		behind, direct int
	}{
		{"no forwarding header (the proxy itself)", false, nil, 200, 200},
		{"forwarded for a remote client", false, []string{"X-Forwarded-For", "203.0.113.9"}, 403, 200},
		{"a spoofed loopback, then the real remote client", false, []string{"X-Forwarded-For", "127.0.0.1, 203.0.113.9"}, 403, 200},
		{"remote client through two trusted hops", false, []string{"X-Forwarded-For", "203.0.113.9, 127.0.0.1"}, 403, 200},
		// A loopback address a proxy's header names is a claim the proxy
		// may have built from the client's own text: not this machine.
		{"forwarded for a loopback client", false, []string{"X-Forwarded-For", "127.0.0.1"}, 403, 200},
		// A proxy appends to its own header and passes the other on: a
		// client's Forwarded is a claim an X-Forwarded-For proxy never
		// checked (it had let any client write), and the reverse.
		{"a client's Forwarded through an X-Forwarded-For proxy", false, []string{"Forwarded", "for=127.0.0.1", "X-Forwarded-For", "203.0.113.9"}, 403, 200},
		{"a client's Forwarded naming no client", false, []string{"Forwarded", "by=192.0.2.1", "X-Forwarded-For", "203.0.113.9"}, 403, 200},
		{"a client's X-Forwarded-For through a Forwarded proxy", true, []string{"X-Forwarded-For", "127.0.0.1", "Forwarded", "for=198.51.100.4"}, 403, 200},
		{"no forwarding header through a Forwarded proxy", true, []string{"X-Forwarded-For", "203.0.113.9"}, 200, 200},
		{"Forwarded for a remote IPv6 client", true, []string{"Forwarded", `for="[2001:db8::1]:4711";proto=https`}, 403, 200},
		{"Forwarded for an unknown client", true, []string{"Forwarded", "for=unknown"}, 403, 200},
		{"Forwarded for an obfuscated client", true, []string{"Forwarded", "for=_hidden, for=127.0.0.1"}, 403, 200},
		{"Forwarded naming no client", true, []string{"Forwarded", "by=192.0.2.1"}, 403, 200},
		{"Forwarded for a loopback client", true, []string{"Forwarded", "for=127.0.0.1"}, 403, 200},
		// A client's text inside a quoted value, or a second for in one
		// element, names no client (an nginx writing host="$http_host"
		// had let a client pose as 127.0.0.2).
		{"Forwarded with a for inside a quoted host", true, []string{"Forwarded", `for=203.0.113.9;host="x;for=127.0.0.2";proto=https`}, 403, 200},
		{"Forwarded with two for in one element", true, []string{"Forwarded", "for=203.0.113.9;for=127.0.0.2"}, 403, 200},
	} {
		base := behind.URL
		if tt.rfc {
			base = behindRFC.URL
		}
		if got := write(base, tt.headers...); got != tt.behind {
			t.Errorf("behind a trusted proxy, %s: %d, want %d", tt.name, got, tt.behind)
		}
		if got := write(direct.URL, tt.headers...); got != tt.direct {
			t.Errorf("from an untrusted peer, %s: %d, want %d", tt.name, got, tt.direct)
		}
	}

	// Rate limits judge the forwarded client behind a trusted proxy, and
	// the peer otherwise.
	limit := RateLimit{Rate: 0.01, Burst: 2}
	limited := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{Trust: proxied, RateLimit: limit}))
	defer limited.Close()
	limitedDirect := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{Trust: elsewhere, RateLimit: limit}))
	defer limitedDirect.Close()
	get := func(base, client string) int {
		resp, _ := do(t, "GET", base+"/v1/collections", "", "", "X-Forwarded-For", client)
		return resp.StatusCode
	}
	for i, want := range []int{200, 200, 429} {
		if got := get(limited.URL, "203.0.113.1"); got != want {
			t.Errorf("behind the proxy, client A's request %d: %d, want %d", i+1, got, want)
		}
	}
	if got := get(limited.URL, "203.0.113.2"); got != 200 {
		t.Errorf("behind the proxy, client B after A was limited: %d, want 200 (its own bucket)", got)
	}
	for i, client := range []string{"203.0.113.1", "203.0.113.2", "203.0.113.3"} {
		want := 200
		if i == 2 {
			want = 429
		}
		if got := get(limitedDirect.URL, client); got != want {
			t.Errorf("untrusted peer claiming %s: %d, want %d (spoofed headers get no fresh bucket)", client, got, want)
		}
	}

	// The MCP tools that write judge the forwarded client too: only the
	// proxy's own requests (no header) are this machine's.
	mcpBehind := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{OpenWrites: true, Trust: proxied, Importer: bibtexImporter}))
	defer mcpBehind.Close()
	for client, refused := range map[string]bool{"203.0.113.9": true, "127.0.0.1": true, "": false} {
		header := "X-Forwarded-For"
		if client == "" {
			header, client = "X-Test-Note", "the proxy's own"
		}
		tr := &mcp.StreamableClientTransport{Endpoint: mcpBehind.URL + "/mcp",
			HTTPClient: &http.Client{Transport: headerTransport{header, client}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "papersearch-test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "import_status", Arguments: map[string]any{"id": "imp_nope"}})
		cs.Close()
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		if got := strings.Contains(text.String(), "PAPERSEARCH_API_KEY"); got != refused {
			t.Errorf("MCP import_status forwarded for %s: %q, refused %v, want %v", client, text.String(), got, refused)
		}
	}
}

// TestUnauthenticatedWritesGet401: with a key and a rate limit, a write
// without the key is answered 401 however many come, and they spend none
// of the client's requests.
func TestUnauthenticatedWritesGet401(t *testing.T) {
	_, papers := server(t)
	srv := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{APIKey: "k", RateLimit: RateLimit{Rate: 0.01, Burst: 2}}))
	defer srv.Close()
	untag(t, []string{papers[0].ID}, "limit-test")
	body := `{"ids":["` + papers[0].ID + `"]}`
	for i := range 6 {
		resp, got := do(t, "POST", srv.URL+"/v1/collections/limit-test/papers", "application/json", body)
		if resp.StatusCode != 401 {
			t.Fatalf("unauthenticated write %d: %d %s, want 401", i+1, resp.StatusCode, got)
		}
	}
	for i, want := range []int{200, 200, 429} {
		resp, got := do(t, "POST", srv.URL+"/v1/collections/limit-test/papers", "application/json", body, "Authorization", "Bearer k")
		if resp.StatusCode != want {
			t.Errorf("authenticated write %d: %d %s, want %d", i+1, resp.StatusCode, got, want)
		}
	}
}

func TestClientAddr(t *testing.T) {
	trust, err := NewTrust("", nil, []string{"10.0.0.0/8", "127.0.0.1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		peer, xff, forwarded, want string
	}{
		{"203.0.113.5:1234", "127.0.0.1", "", "203.0.113.5"},
		{"127.0.0.1:1234", "", "", "127.0.0.1"},
		{"127.0.0.1:1234", "198.51.100.7", "", "198.51.100.7"},
		{"127.0.0.1:1234", "198.51.100.7, 10.1.1.1", "", "198.51.100.7"},
		{"127.0.0.1:1234", "1.2.3.4, 198.51.100.7, 10.1.1.1", "", "198.51.100.7"},
		{"127.0.0.1:1234", "10.2.2.2, 10.1.1.1", "", "10.2.2.2"},
		{"127.0.0.1:1234", "garbage", "", "invalid IP"},
		{"127.0.0.1:1234", "", `for=192.0.2.43, for="[2001:db8:cafe::17]:4711"`, "127.0.0.1"}, // not its header: the proxy's own
		{"127.0.0.1:1234", "198.51.100.7", `for=127.0.0.1`, "198.51.100.7"},
		{"[::ffff:127.0.0.1]:80", "198.51.100.7", "", "198.51.100.7"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tt.peer
		if tt.xff != "" {
			r.Header.Set("X-Forwarded-For", tt.xff)
		}
		if tt.forwarded != "" {
			r.Header.Set("Forwarded", tt.forwarded)
		}
		if got := trust.clientAddr(r); got.String() != tt.want {
			t.Errorf("peer %s, X-Forwarded-For %q, Forwarded %q: %s, want %s", tt.peer, tt.xff, tt.forwarded, got, tt.want)
		}
	}
	rfc, err := NewTrust("", nil, []string{"127.0.0.1"}, "Forwarded")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ xff, forwarded, want string }{
		{"", `for=192.0.2.43, for="[2001:db8:cafe::17]:4711"`, "2001:db8:cafe::17"},
		{"203.0.113.5", `for=127.0.0.1`, "127.0.0.1"},
		{"", `by=192.0.2.1;proto=https`, "invalid IP"},
		// RFC 7239's grammar: quoted strings hold what they hold, an
		// element names each parameter once, and a header that does not
		// parse names no client.
		{"", `for=203.0.113.9;host="x;for=127.0.0.2";proto=https`, "203.0.113.9"},
		{"", `for=203.0.113.9;host="a,for=127.0.0.2"`, "203.0.113.9"},
		{"", `For=203.0.113.9 ; Proto=https , for="198.51.100.2:80"`, "198.51.100.2"},
		{"", `for="\[2001:db8::1\]"`, "2001:db8::1"},
		{"", `for=203.0.113.9;for=127.0.0.2`, "invalid IP"},
		{"", `for=203.0.113.9;host="x`, "invalid IP"},
		{"", `for=203.0.113.9 for=127.0.0.2`, "invalid IP"},
		// Each element stands alone: one that does not parse names no one,
		// and the nearer proxies' elements after it still count; an
		// address a proxy wrote without RFC 7239's quotes is read.
		{"", `for=x;for=y, for=203.0.113.9`, "203.0.113.9"},
		{"", `for="a, b, for=203.0.113.9`, "invalid IP"}, // the quote runs to the end
		{"", `for=203.0.113.9;proto=https;proto=https`, "203.0.113.9"},
		{"", `for=2001:db8::1`, "2001:db8::1"},
		{"", `for=1.2.3.4:80`, "1.2.3.4"},
		{"198.51.100.7", "", "127.0.0.1"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "127.0.0.1:1234"
		if tt.xff != "" {
			r.Header.Set("X-Forwarded-For", tt.xff)
		}
		if tt.forwarded != "" {
			r.Header.Set("Forwarded", tt.forwarded)
		}
		if got := rfc.clientAddr(r); got.String() != tt.want {
			t.Errorf("a Forwarded proxy, X-Forwarded-For %q, Forwarded %q: %s, want %s", tt.xff, tt.forwarded, got, tt.want)
		}
	}
	if _, err := NewTrust("", nil, nil, "X-Real-IP"); err == nil {
		t.Error("X-Real-IP taken as the proxies' header")
	}
	if a := netip.MustParseAddr("::1"); !(Trust{}).hosts.allows("[" + a.String() + "]:80") {
		t.Error("[::1] is not answered for")
	}
}

// untag takes the tags a test added off the shared server's papers.
func untag(t *testing.T, ids []string, tags ...string) {
	t.Cleanup(func() {
		if _, err := catalog.New(testServer.engine, catalog.Options{}).Retag(context.Background(), ids, nil, tags); err != nil {
			t.Error(err)
		}
	})
}

// TestBodyEncodingRefused: a body in a content coding is refused with
// 415 and Accept-Encoding: identity (it would be read as sent), whether
// gzip, br or a list; identity passes.
func TestBodyEncodingRefused(t *testing.T) {
	url, _ := server(t)
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(`{"query":"brain signals","limit":1}`))
	w.Close()
	for _, tt := range []struct {
		coding, body string
		status       int
	}{
		{"gzip", gz.String(), 415},
		{"br", `{"query":"brain signals","limit":1}`, 415},
		{"identity, gzip", gz.String(), 415},
		{"identity", `{"query":"brain signals","limit":1}`, 200},
	} {
		resp, body := do(t, "POST", url+"/v1/search", "application/json", tt.body, "Content-Encoding", tt.coding)
		if resp.StatusCode != tt.status {
			t.Errorf("Content-Encoding %q: status %d, want %d: %s", tt.coding, resp.StatusCode, tt.status, body)
		}
		if tt.status == 415 && (resp.Header.Get("Accept-Encoding") != "identity" || resp.Header.Get("Content-Type") != "application/problem+json") {
			t.Errorf("Content-Encoding %q: Accept-Encoding %q, Content-Type %q", tt.coding, resp.Header.Get("Accept-Encoding"), resp.Header.Get("Content-Type"))
		}
	}
}

// TestClientRequestIDs: a client's X-Request-Id is echoed only when it is
// a short token; a long one, or one with other characters, is replaced by
// the server's own.
func TestClientRequestIDs(t *testing.T) {
	url, _ := server(t)
	for _, tt := range []struct {
		id   string
		kept bool
	}{
		{"4bf92f3577b34da6a3ce929d0e0e4736", true},
		{"req-1.2:3_x", true},
		{strings.Repeat("A", 129), false},
		{"<script>alert(1)</script>", false},
		{"a b", false},
	} {
		resp, body := do(t, "GET", url+"/v1/papers/no-such-paper", "", "", "X-Request-Id", tt.id)
		got := resp.Header.Get("X-Request-Id")
		if (got == tt.id) != tt.kept || got == "" || !clientRequestID(got) {
			t.Errorf("X-Request-Id %.40q: answered with %.40q (kept: want %v)", tt.id, got, tt.kept)
		}
		var p wire.Problem
		if err := json.Unmarshal(body, &p); err != nil || p.RequestID != got {
			t.Errorf("X-Request-Id %.40q: problem's request id %q, header's %q (%v)", tt.id, p.RequestID, got, err)
		}
	}
}
