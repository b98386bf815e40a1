package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/papersearch/papersearch/catalog"
)

// statusLog records the status of every request a handler answers.
type statusLog struct {
	mu   sync.Mutex
	seen []string // "METHOD /path status"
}

func (l *statusLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusWriter{ResponseWriter: w, status: 200}
		h.ServeHTTP(rec, r)
		l.mu.Lock()
		l.seen = append(l.seen, fmt.Sprintf("%s %s %d", r.Method, r.URL.Path, rec.status))
		l.mu.Unlock()
	})
}

func (l *statusLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen)
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }

// TestBrowserAttacks: in real Chromium, a page of another site that the
// user has open tries what a browser lets any page do against the
// keyless loopback service: a form posted as text/plain and as
// form-urlencoded, and fetch() with a simple content type and with JSON.
// None reaches a handler; the paper stays. A DNS rebinding name (the
// attacker's, resolved to loopback) gets 421 for the page it loads.
func TestBrowserAttacks(t *testing.T) {
	ctx := browser(t)
	_, papers := server(t)
	id := papers[2].ID
	before, err := testServer.engine.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var log statusLog
	target := httptest.NewServer(log.wrap(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{OpenWrites: true})))
	defer target.Close()
	u, _ := url.Parse(target.URL)
	body := fmt.Sprintf(`{"papers":[{"id":%q,"abstract":"replaced cross-site"}]}`, id)
	evilPage := `<!doctype html><title>evil</title><body>
<iframe name="sink"></iframe>
<form id="plain" method="POST" enctype="text/plain" target="sink" action="` + target.URL + `/v1/papers">
<input name='` + strings.TrimSuffix(body, `}]}`) + `,"x":"' value='"}]}'></form>
<form id="urlenc" method="POST" target="sink" action="` + target.URL + `/v1/papers">
<input name='` + body + `' value=''></form>
<script>
document.getElementById("plain").submit();
setTimeout(() => document.getElementById("urlenc").submit(), 300);
const b = ` + "`" + body + "`" + `;
Promise.allSettled([
  fetch("` + target.URL + `/v1/papers", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: b}),
  fetch("` + target.URL + `/v1/papers", {method: "POST", mode: "no-cors", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: b}),
  fetch("` + target.URL + `/v1/papers", {method: "POST", headers: {"Content-Type": "application/json"}, body: b}),
  fetch("` + target.URL + `/v1/papers/` + url.PathEscape(id) + `", {method: "DELETE", mode: "no-cors"}),
]).then(() => setTimeout(() => { document.title = "done"; }, 1000));
</script>`
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, evilPage)
	}))
	defer evil.Close()
	// localhost against 127.0.0.1: another site, as a browser judges it.
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)
	var title string
	if err := chromedp.Run(ctx, chromedp.Navigate(evilURL+"/"),
		chromedp.Poll(`document.title === "done"`, nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Title(&title)); err != nil {
		t.Fatalf("the attacking page: %v", err)
	}
	after, err := testServer.engine.Get(context.Background(), id)
	if err != nil || after.Abstract != before.Abstract {
		t.Fatalf("a cross-site page changed or removed the paper: %q %v", after.Abstract, err)
	}
	seen := log.list()
	posts := 0
	for _, s := range seen {
		if strings.HasPrefix(s, "POST /v1/papers ") {
			posts++
			if !strings.HasSuffix(s, " 403") && !strings.HasSuffix(s, " 415") {
				t.Errorf("a cross-site request was answered %q, want 403 or 415", s)
			}
		}
	}
	if posts < 4 { // two forms, two simple fetches (the JSON fetch may stop at its preflight)
		t.Errorf("the page's writes reached the service %d times, want at least 4: %v", posts, seen)
	}
	t.Logf("reliability: a cross-site page in Chromium sent %d writes to the keyless loopback service: %v; the paper is unchanged", posts, seen)

	// DNS rebinding: the attacker's name resolves to loopback; the page it
	// loads (or reads with fetch, same-origin) gets nothing.
	var text string
	rebound := "http://rebind.test:" + u.Port() + "/v1/papers/" + url.PathEscape(id)
	if err := chromedp.Run(ctx, chromedp.Navigate(rebound), chromedp.Text("body", &text)); err != nil {
		t.Fatalf("rebinding page: %v", err)
	}
	if !strings.Contains(text, "misdirected") || strings.Contains(text, before.Title) {
		t.Errorf("a rebinding name read %q", text)
	}
}
