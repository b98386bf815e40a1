package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/catalog"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/seeds"
)

// chromium finds the browser for the page test: $PAPERSEARCH_CHROMIUM, or
// Debian's chromium.
func chromium(t *testing.T) string {
	for _, p := range []string{os.Getenv("PAPERSEARCH_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	testenv.Missing(t, "no Chromium: install Debian's chromium (.ci/run does) or set PAPERSEARCH_CHROMIUM")
	return ""
}

// browser starts headless Chromium for one test and returns its context,
// bounded to 90 s.
func browser(t *testing.T) context.Context {
	t.Helper()
	exe := chromium(t)
	// Chromium may still write its profile while shutting down, so the
	// profile is removed after the browser, ignoring what it left behind.
	profile, err := os.MkdirTemp("", "papersearch-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(profile) })
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true),
		// rebind.test plays a DNS rebinding attacker's name, resolved to
		// loopback without asking any DNS server (TestBrowserAttacks).
		chromedp.Flag("host-resolver-rules", "MAP rebind.test 127.0.0.1"),
		chromedp.UserDataDir(profile), chromedp.WindowSize(1200, 1400))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestSearchPage drives the page in headless Chromium as a person would:
// types a question, sees results with highlighted words and explanations,
// follows "Similar papers", picks "similar method", gets BibTeX, and saves
// a screenshot.
func TestSearchPage(t *testing.T) {
	url, _ := server(t)
	ctx := browser(t)
	var firstTitle, status, marks, why string
	var count int
	err := chromedp.Run(ctx,
		chromedp.Navigate(url+"/"),
		chromedp.WaitVisible("#q", chromedp.ByID),
		chromedp.SendKeys("#q", "brain signal foundation models and hand-crafted features", chromedp.ByID),
		chromedp.Click("#go", chromedp.ByID),
		chromedp.WaitVisible(".result", chromedp.ByQuery),
		chromedp.Text(".result h2", &firstTitle, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll(".result").length`, &count),
		chromedp.Evaluate(`Array.from(document.querySelectorAll(".result mark")).map(m => m.textContent).join(" ")`, &marks),
		chromedp.Text(".result .why", &why, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatal(err)
	}
	if count < 2 || !strings.Contains(firstTitle, "electroencephalogram") && !strings.Contains(firstTitle, "EEG") {
		t.Errorf("%d results, first %q", count, firstTitle)
	}
	if marks == "" || !strings.Contains(why, "dense rank") {
		t.Errorf("no highlighted words (%q) or explanation (%q)", marks, why)
	}
	shot := filepath.Join(t.TempDir(), "search.png")
	var png []byte
	err = chromedp.Run(ctx,
		chromedp.FullScreenshot(&png, 100), // 100: PNG
		chromedp.Click(".result .similar", chromedp.ByQuery),
		chromedp.WaitVisible(`//div[@id="status"][contains(., "similar to")]`, chromedp.BySearch),
		chromedp.Text("#status", &status, chromedp.ByID),
		chromedp.Evaluate(`document.querySelectorAll(".result").length`, &count),
	)
	if err != nil {
		t.Fatal(err)
	}
	if count == 0 || !strings.Contains(status, "Papers similar to") {
		t.Errorf("similar page: %d results, status %q", count, status)
	}
	// Picking "similar method" next to a result's "Similar papers" shows
	// papers by their method sentences, each with the matched pair.
	var aspectWhy string
	err = chromedp.Run(ctx,
		chromedp.Evaluate(`(() => { const s = document.querySelector(".result .aspect"); s.value = "method";
			s.dispatchEvent(new Event("change", {bubbles: true})); })()`, nil),
		chromedp.WaitVisible(`//div[@id="status"][contains(., "with same method as")]`, chromedp.BySearch),
		chromedp.Text(".result .why", &aspectWhy, chromedp.ByQuery),
		chromedp.Text("#status", &status, chromedp.ByID),
	)
	if err != nil {
		t.Fatalf("aspect: %v (status %q)", err, status)
	}
	if !strings.Contains(aspectWhy, "same method: “") || !strings.Contains(aspectWhy, "” ↔ ") {
		t.Errorf("aspect explanation %q", aspectWhy)
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("PAPERSEARCH_SCREENSHOT"); out != "" {
		os.WriteFile(out, png, 0o644)
	}
	var bib string
	err = chromedp.Run(ctx,
		chromedp.Click(".result .bibtex", chromedp.ByQuery),
		chromedp.Sleep(500*time.Millisecond),
		chromedp.Evaluate(`(document.querySelector("textarea.bib") || {}).value || document.querySelector(".result .bibtex").textContent`, &bib),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(bib, "@inproceedings{") && bib != "Copied" {
		t.Errorf("copy as BibTeX gave %q", bib)
	}
	t.Logf("page: %d similar results; screenshot %s (%d bytes); BibTeX: %.40q", count, shot, len(png), bib)
}

// TestSearchPageLinksOnlyTheWeb stores a paper with a javascript: URL
// through the API (refused) and, as a store written before that rule
// might hold one, straight into the engine; then it searches on the page
// and finds every link there http or https, the stored script never run.
func TestSearchPageLinksOnlyTheWeb(t *testing.T) {
	server(t)
	srv := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{OpenWrites: true}))
	defer srv.Close()
	evil := `{"papers":[{"id":"xss-api","title":"Zebrafish regeneration atlas","abstract":"Zebrafish fin regeneration atlas.","url":"javascript:alert(document.domain)"}]}`
	if resp, body := do(t, "POST", srv.URL+"/v1/papers", "application/json", evil); resp.StatusCode != 400 {
		t.Fatalf("a javascript: URL was accepted: %d %s", resp.StatusCode, body)
	}
	ctx := context.Background()
	legacy := []papersearch.Paper{
		{ID: "xss-legacy", Title: "Zebrafish heart regeneration", Abstract: "Zebrafish heart regeneration after injury.",
			URL: "javascript:window.pwned=1"},
		{ID: "xss-data", Title: "Zebrafish scale regeneration", Abstract: "Zebrafish scale regeneration in adults.",
			URL: "data:text/html,<script>window.pwned=1</script>"},
		{ID: "web-ok", Title: "Zebrafish spinal cord regeneration", Abstract: "Zebrafish spinal cord regeneration.",
			URL: "https://example.org/zebrafish"},
	}
	if _, err := catalog.New(testServer.engine, catalog.Options{}).Ingest(ctx, legacy, nil); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, p := range legacy {
			catalog.New(testServer.engine, catalog.Options{}).Delete(ctx, p.ID)
		}
	}()
	resp, _ := do(t, "GET", srv.URL+"/", "", "")
	csp := resp.Header.Get("Content-Security-Policy")
	_, scripts, _ := strings.Cut(csp, "script-src ")
	scripts, _, _ = strings.Cut(scripts, ";")
	if !strings.HasPrefix(scripts, "'sha256-") || strings.Contains(scripts, "unsafe-inline") {
		t.Errorf("the page's CSP allows scripts by %q, want only its own script's hash", scripts)
	}

	var count int
	var schemes, titles []string
	var pwned bool
	err := chromedp.Run(browser(t),
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible("#q", chromedp.ByID),
		chromedp.SendKeys("#q", "zebrafish regeneration", chromedp.ByID),
		chromedp.Click("#go", chromedp.ByID),
		chromedp.WaitVisible(".result", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll(".result").length`, &count),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("a[href]")).map(a => new URL(a.getAttribute("href"), location.href).protocol)`, &schemes),
		chromedp.Evaluate(`Array.from(document.querySelectorAll(".result h2 a")).map(a => a.textContent)`, &titles),
		chromedp.Evaluate(`!!window.pwned`, &pwned),
	)
	if err != nil {
		t.Fatal(err)
	}
	if count < 3 {
		t.Fatalf("%d results for the zebrafish papers", count)
	}
	for _, s := range schemes {
		if s != "http:" && s != "https:" {
			t.Errorf("a link on the page has the scheme %q", s)
		}
	}
	if len(titles) != 1 || !strings.Contains(titles[0], "spinal cord") {
		t.Errorf("linked titles %q, want only the https paper's", titles)
	}
	if pwned {
		t.Error("a stored script ran")
	}
}

// TestSearchPageRendersMarkupAndKeepsItsState: a title and abstract
// holding LaTeX and Markdown show as text, bold and italic (no "$\textbf",
// no "**", and no HTML from the paper), maths as what it prints or as its
// LaTeX, never with a command dropped; the page's URL holds the query,
// mode and filters, so opening it again asks the same; author and tag
// filters are on the page; the status line gives the time in ms or s.
func TestSearchPageRendersMarkupAndKeepsItsState(t *testing.T) {
	url, _ := server(t)
	ctx := context.Background()
	paper := papersearch.Paper{ID: "markup-page", Title: `$\textbf{UniCon3R}$: quokka reconstruction`, Tags: []string{"marsupials"},
		Abstract: `**This position paper** argues that quokka *reconstruction* needs 100\% of views <img src=x onerror="window.pwned=1">. ` +
			`It factors $V \approx WH$ at a rate of $O(1/\sqrt{n})$ in the $\Gamma$-trace norm, for $5 or $10.`,
		Authors: []string{"Ada Lovelace"}, Year: 2024}
	if _, err := catalog.New(testServer.engine, catalog.Options{}).Ingest(ctx, []papersearch.Paper{paper}, nil); err != nil {
		t.Fatal(err)
	}
	defer catalog.New(testServer.engine, catalog.Options{}).Delete(ctx, paper.ID)
	b := browser(t)
	var title, titleHTML, abstract, abstractHTML, status, hash, author, tags, mode, highlighted, folded, byline string
	var pwned bool
	var cut int
	err := chromedp.Run(b,
		chromedp.Navigate(url+"/#q=quokka+reconstruction&mode=lexical&author=lovelace&tag=marsupials&year_min=2020"),
		chromedp.WaitVisible(".result", chromedp.ByQuery),
		chromedp.Text(".result h2", &title, chromedp.ByQuery),
		chromedp.InnerHTML(".result h2", &titleHTML, chromedp.ByQuery),
		chromedp.InnerHTML(".result .abstract", &abstractHTML, chromedp.ByQuery),
		chromedp.Text(".result .abstract", &abstract, chromedp.ByQuery),
		chromedp.Text("#status", &status, chromedp.ByID),
		chromedp.Value("#author", &author, chromedp.ByID),
		chromedp.Value("#tags", &tags, chromedp.ByID),
		chromedp.Value("#mode", &mode, chromedp.ByID),
		chromedp.Evaluate(`!!window.pwned`, &pwned),
		chromedp.Evaluate(`highlight("the model's 39 views & <b>", ["39", "amp", "quot", "lt", "views"])`, &highlighted),
		chromedp.Evaluate(`highlight("Café résumés, Ångström in 北京 (cafeteria, resumed); Paris", ["cafe", "resume", "angstrom", "北京"])`, &folded),
		chromedp.Evaluate(`snippet("あ".repeat(800), 420).length`, &cut),
		chromedp.Evaluate(`byline({venue: "V", year: 2020, authors: Array.from({length: 300}, (_, i) => "A" + i)})`, &byline),
	)
	if err != nil {
		t.Fatal(err)
	}
	// Words are marked in the text, never inside the escapes of it.
	if want := "the model&#39;s <mark>39</mark> <mark>views</mark> &amp; &lt;b&gt;"; highlighted != want {
		t.Errorf("highlight: %s, want %s", highlighted, want)
	}
	// The server matched the words with their accents dropped: so does the
	// page, in any script.
	if want := "<mark>Café</mark> <mark>résumés</mark>, <mark>Ångström</mark> in <mark>北京</mark> (<mark>cafeteria</mark>, <mark>resumed</mark>); Paris"; folded != want {
		t.Errorf("highlight: %s, want %s", folded, want)
	}
	// Three hundred authors: the first six and how many more, all of them
	// on hover.
	if want := `V 2020 · <span title="A0, A1, `; !strings.HasPrefix(byline, want) || !strings.HasSuffix(byline, `A299">A0, A1, A2, A3, A4, A5 and 294 more</span>`) {
		t.Errorf("byline of 300 authors: %s", byline)
	}
	if cut != 422 { // 420 characters and " …": a text without spaces is cut too
		t.Errorf("a snippet of 800 characters without a space has %d", cut)
	}
	if !strings.Contains(title, "UniCon3R: quokka reconstruction") || strings.Contains(title, `\textbf`) || strings.Contains(title, "$") ||
		!strings.Contains(titleHTML, "<strong>UniCon3R</strong>") {
		t.Errorf("title %q (%s)", title, titleHTML)
	}
	if !strings.Contains(abstractHTML, "<strong>This position paper</strong>") || !strings.Contains(abstractHTML, "<em>") ||
		strings.Contains(abstractHTML, "**") || strings.Contains(abstractHTML, "<img") || pwned {
		t.Errorf("abstract %s (script ran: %v)", abstractHTML, pwned)
	}
	if !strings.Contains(abstract, "V ≈ WH") || !strings.Contains(abstract, `O(1/\sqrt{n})`) || !strings.Contains(abstract, "Γ-trace norm, for $5 or $10.") ||
		strings.Contains(abstract, "approxWH") {
		t.Errorf("the abstract's maths shows as %q", abstract)
	}
	if author != "lovelace" || tags != "marsupials" || mode != "lexical" || !regexp.MustCompile(`(· \d+ ms|· \d+\.\d s)( · see them on the map)?$`).MatchString(status) {
		t.Errorf("state from the URL: author %q, tags %q, mode %q; status %q", author, tags, mode, status)
	}
	// A new search keeps the form's state in the URL.
	err = chromedp.Run(b,
		chromedp.SetValue("#q", "quokka views", chromedp.ByID),
		chromedp.SetValue("#author", "ada", chromedp.ByID),
		chromedp.Click("#go", chromedp.ByID),
		chromedp.WaitVisible(`//div[@id="status"][contains(., "shown of")]`, chromedp.BySearch),
		chromedp.Evaluate(`location.hash`, &hash),
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"q=quokka+views", "mode=lexical", "author=ada", "tag=marsupials", "year_min=2020"} {
		if !strings.Contains(hash, want) {
			t.Errorf("URL %q lacks %s", hash, want)
		}
	}
	// An empty lexical ranking blames the words, not the filters.
	err = chromedp.Run(b,
		chromedp.SetValue("#q", "zzqxvw qqjjxk", chromedp.ByID),
		chromedp.Click("#go", chromedp.ByID),
		chromedp.WaitVisible(`//div[@id="status"][contains(., "shown of")]`, chromedp.BySearch),
		chromedp.Text("#status", &status, chromedp.ByID),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(status, "No paper within these filters holds the question's words. 0 shown of") {
		t.Errorf("an empty lexical search says %q", status)
	}
}

// TestSearchPageUnderPrefix: behind a proxy that serves the service under
// a path prefix (as PAPERSEARCH_PUBLIC_URL's may be) and nothing else, the
// page asks the API under that prefix too: a search answers, a paper's
// similar papers and its BibTeX come; a proxy's answer that is no JSON
// is said as its status, not as a JSON parse error.
func TestSearchPageUnderPrefix(t *testing.T) {
	server(t)
	mux := http.NewServeMux()
	h := New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{})
	mux.Handle("/ps/", http.StripPrefix("/ps", h))
	mux.HandleFunc("/ps", func(w http.ResponseWriter, r *http.Request) { // a proxy that maps /ps itself to the page
		r.URL.Path = "/"
		h.ServeHTTP(w, r)
	})
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "not under /ps/", http.StatusBadGateway) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b := browser(t)
	var status, similar, slashless string
	if err := chromedp.Run(b,
		chromedp.Navigate(srv.URL+"/ps#q=brain+signal+foundation+models"),
		chromedp.WaitVisible(".result", chromedp.ByQuery),
		chromedp.Evaluate(`location.pathname + location.hash`, &slashless),
	); err != nil {
		t.Fatalf("the page reached as /ps: %v", err)
	}
	if slashless != "/ps/#q=brain+signal+foundation+models" {
		t.Errorf("the page reached as /ps is at %q", slashless)
	}
	err := chromedp.Run(b,
		chromedp.Navigate(srv.URL+"/ps/#q=brain+signal+foundation+models"),
		chromedp.WaitVisible(".result", chromedp.ByQuery),
		chromedp.Click(".result .similar", chromedp.ByQuery),
		chromedp.WaitVisible(`//div[@id="status"][contains(., "Papers similar to")]`, chromedp.BySearch),
		chromedp.Text("#status", &similar, chromedp.ByID),
		chromedp.Evaluate(`call("/v1/collections").then(() => "answered", e => e.message)`, &status, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
			return p.WithAwaitPromise(true)
		}),
	)
	if err != nil {
		t.Fatalf("%v (status %q)", err, similar)
	}
	if status != "the server answered 502 Bad Gateway" {
		t.Errorf("an answer that is no JSON is said as %q", status)
	}
}

// TestCollectionPage drives the collection view in headless Chromium: a
// search result is added to a new collection from its "Add to
// collection" control; the collection's view lists its papers, the feed
// link, and recommendations each saying which member it is near; "Not
// interested" on one marks it and the view drops it.
func TestCollectionPage(t *testing.T) {
	_, papers := server(t)
	srv := httptest.NewServer(New(testServer.engine, catalog.New(testServer.engine, catalog.Options{}), Options{OpenWrites: true}))
	defer srv.Close()
	defer func() { // leave the shared store as it was
		for _, p := range papers {
			do(t, "DELETE", srv.URL+"/v1/collections/page-list/papers/"+neturl.PathEscape(p.ID), "", "")
			do(t, "DELETE", srv.URL+"/v1/collections/page-list/not-interested/"+neturl.PathEscape(p.ID), "", "")
		}
	}()
	ctx := browser(t)
	var added string
	err := chromedp.Run(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible("#q", chromedp.ByID),
		chromedp.SendKeys("#q", "brain signal foundation models", chromedp.ByID),
		chromedp.Click("#go", chromedp.ByID),
		chromedp.WaitVisible(".result .add", chromedp.ByQuery),
		chromedp.SetValue(".result .coll", "page-list", chromedp.ByQuery),
		chromedp.Click(".result .add", chromedp.ByQuery),
		chromedp.WaitVisible(`//button[contains(., "Added to page-list")]`, chromedp.BySearch),
		chromedp.Evaluate(`document.querySelector(".result .add").dataset.id`, &added),
	)
	if err != nil {
		t.Fatal(err)
	}
	var col wire.CollectionResponse
	if _, b := do(t, "GET", srv.URL+"/v1/collections/page-list/papers", "", ""); json.Unmarshal(b, &col) != nil || len(col.Papers) != 1 || col.Papers[0].ID != added {
		t.Fatalf("after adding %s on the page: %s", added, b)
	}
	var status, because, feed, dismissed string
	var members, recs int
	var png []byte
	err = chromedp.Run(ctx,
		chromedp.Navigate(srv.URL+"/#collection=page-list"),
		chromedp.WaitVisible("#feed", chromedp.ByID),
		chromedp.WaitVisible("#results .result .why", chromedp.ByQuery),
		chromedp.Text("#status", &status, chromedp.ByID),
		chromedp.Evaluate(`document.querySelector("#feed").href`, &feed), // resolved: the page's paths are relative
		chromedp.Text("#results .result .why", &because, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("#members-section .result").length`, &members),
		chromedp.Evaluate(`document.querySelectorAll("#results .result").length`, &recs),
		chromedp.FullScreenshot(&png, 100),
		chromedp.Evaluate(`document.querySelector("#results .result .dismiss").dataset.id`, &dismissed),
		chromedp.Click("#results .result .dismiss", chromedp.ByQuery),
		chromedp.WaitVisible(`//div[@id="status"][contains(., "1 marked not interested")]`, chromedp.BySearch),
	)
	if err != nil {
		t.Fatalf("%v (status %q)", err, status)
	}
	if !strings.Contains(status, "page-list: 1 paper,") || feed != srv.URL+"/v1/collections/page-list/feed.atom" || members != 1 || recs == 0 ||
		!strings.Contains(because, "Because you have “") {
		t.Errorf("the collection's view: status %q, feed %q, %d members, %d recommendations, %q", status, feed, members, recs, because)
	}
	var still int
	chromedp.Run(ctx, chromedp.Evaluate(`Array.from(document.querySelectorAll("#results .result .dismiss")).filter(b => b.dataset.id === `+strconv.Quote(dismissed)+`).length`, &still))
	if still != 0 {
		t.Errorf("the paper marked not interested is still recommended")
	}
	if out := os.Getenv("PAPERSEARCH_SCREENSHOT_COLLECTION"); out != "" {
		os.WriteFile(out, png, 0o644)
	}
}

// TestMapPage drives the map view in headless Chromium: it waits out the
// first layout, draws every paper with a search's results lit up, names
// a paper under the pointer, zooms and pans (each frame timed; the times
// are logged, not asserted), and a click opens the paper's similar papers.
// PAPERSEARCH_MAP_PAGE_URL points it at another running service (a large
// corpus, to measure its frames: docs/performance.md).
func TestMapPage(t *testing.T) {
	url := os.Getenv("PAPERSEARCH_MAP_PAGE_URL")
	if url == "" {
		url, _ = server(t)
	}
	waitForMap(t, url)
	ctx := browser(t)
	var status string
	var dots, lit int
	err := chromedp.Run(ctx,
		chromedp.Navigate(url+"/#map&q="+neturl.QueryEscape("robots that learn from demonstrations")),
		chromedp.WaitVisible("#map", chromedp.ByID),
		chromedp.WaitVisible(`//div[@id="status"][contains(., "lit up")]`, chromedp.BySearch),
		chromedp.Text("#status", &status, chromedp.ByID),
		chromedp.Evaluate(`atlas.data.ids.length`, &dots),
		chromedp.Evaluate(`atlas.data.highlight.length`, &lit),
	)
	if err != nil {
		t.Fatalf("%v (status %q)", err, status)
	}
	if dots == 0 || lit == 0 || !strings.Contains(status, "papers in") {
		t.Fatalf("the map: %d papers, %d lit up, status %q", dots, lit, status)
	}
	// A paper is drawn large enough to see (measured with nothing lit up):
	// a small corpus's dots are not the one or two pixels of a large one's.
	var inked int
	err = chromedp.Run(ctx, chromedp.Evaluate(`(() => { const d = atlas.data, c = $("map"), r = c.getBoundingClientRect(), dpr = window.devicePixelRatio || 1;
		const lit = d.lit; d.lit = new Set(); drawMap(); d.lit = lit;
		const i = 0, f = frame(r), s = f.side * atlas.s;
		const x = f.x0 + (d.x[i] / d.scale - atlas.ox) * s, y = f.y0 + (d.y[i] / d.scale - atlas.oy) * s;
		const px = c.getContext("2d").getImageData(Math.round((x - 2) * dpr), Math.round((y - 2) * dpr), Math.round(5 * dpr), Math.round(5 * dpr)).data;
		let n = 0; for (let k = 3; k < px.length; k += 4) if (px[k] > 0) n++;
		redraw(); return n / (dpr * dpr); })()`, &inked))
	if err != nil || dots < 100 && inked < 16 {
		t.Errorf("a paper of a map of %d: %d of the 25 pixels around it inked, want at least 16 (%v)", dots, inked, err)
	}
	// No paper is cut at the canvas's edge: at the first zoom every dot
	// (7 px at most) and the 12 px ring around a paper the pointer is on
	// lie inside it.
	var closest float64
	err = chromedp.Run(ctx, chromedp.Evaluate(`(() => { const d = atlas.data, r = $("map").getBoundingClientRect(), f = frame(r);
		let m = Infinity;
		for (let i = 0; i < d.ids.length; i++) {
			const x = f.x0 + d.x[i] / d.scale * f.side, y = f.y0 + d.y[i] / d.scale * f.side;
			m = Math.min(m, x, y, r.width - x, r.height - y);
		}
		return m; })()`, &closest))
	if err != nil || closest < 12 {
		t.Errorf("a paper drawn %.1f px from the canvas's edge, want at least 12 (%v)", closest, err)
	}
	// No two topic names drawn overlap.
	var overlaps int
	err = chromedp.Run(ctx, chromedp.Evaluate(`(() => { drawMap(); const b = atlas.names || []; let n = 0;
		for (let i = 0; i < b.length; i++) for (let j = 0; j < i; j++) if (b[i][0] < b[j][2] && b[j][0] < b[i][2] && b[i][1] < b[j][3] && b[j][1] < b[i][3]) n++;
		return b.length ? n : -1; })()`, &overlaps))
	if err != nil || overlaps != 0 {
		t.Errorf("topic names overlapping: %d pairs (-1: none drawn) (%v)", overlaps, err)
	}
	// The pointer on a paper names it; a click opens its similar papers.
	var tip, title, hash string
	at := `(() => { const d = atlas.data, r = $("map").getBoundingClientRect(), f = frame(r), s = f.side * atlas.s;
		return [r.left + f.x0 + (d.x[0] / d.scale - atlas.ox) * s, r.top + f.y0 + (d.y[0] / d.scale - atlas.oy) * s]; })()`
	pointer := func(kind string) string {
		return `(() => { const [x, y] = ` + at + `; $("map").dispatchEvent(new PointerEvent("` + kind + `", {clientX: x, clientY: y, bubbles: true, pointerId: 1})); return true; })()`
	}
	var ok bool
	err = chromedp.Run(ctx,
		chromedp.Evaluate(pointer("pointermove"), &ok),
		chromedp.Evaluate(`$("maptip").textContent`, &tip),
		chromedp.Evaluate(`atlas.data.titles[0]`, &title),
	)
	if err != nil || tip == "" || tip != title {
		t.Errorf("the pointer on the first paper: tip %q, its title %q (%v)", tip, title, err)
	}
	// Zoom in at the centre and pan, as a person would, a frame each.
	err = chromedp.Run(ctx,
		chromedp.Evaluate(`(async () => { const c = $("map"), r = c.getBoundingClientRect();
			for (let i = 0; i < 20; i++) { c.dispatchEvent(new WheelEvent("wheel", {deltaY: -60, clientX: r.left + r.width / 2, clientY: r.top + r.height / 2, bubbles: true, cancelable: true})); await new Promise(requestAnimationFrame); }
			c.dispatchEvent(new PointerEvent("pointerdown", {clientX: r.left + 100, clientY: r.top + 100, pointerId: 2, bubbles: true}));
			for (let i = 0; i < 30; i++) { c.dispatchEvent(new PointerEvent("pointermove", {clientX: r.left + 100 + 5 * i, clientY: r.top + 100 + 3 * i, pointerId: 2, bubbles: true})); await new Promise(requestAnimationFrame); }
			c.dispatchEvent(new PointerEvent("pointerup", {clientX: r.left + 250, clientY: r.top + 190, pointerId: 2, bubbles: true}));
			return true; })()`, &ok, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }),
	)
	if err != nil {
		t.Fatal(err)
	}
	var frames []float64
	var zoom float64
	chromedp.Run(ctx, chromedp.Evaluate(`atlas.frames`, &frames), chromedp.Evaluate(`atlas.s`, &zoom))
	if len(frames) < 20 || zoom <= 1 {
		t.Errorf("%d frames drawn, zoom %.2f after zooming and panning", len(frames), zoom)
	}
	var worst float64
	for _, f := range frames {
		worst = max(worst, f)
	}
	slices.Sort(frames)
	t.Logf("map of %d papers: %d frames, median %.2f ms, worst %.2f ms", dots, len(frames), frames[len(frames)/2], worst)
	var png []byte
	err = chromedp.Run(ctx,
		chromedp.Evaluate(`atlas.s = 1; atlas.ox = 0; atlas.oy = 0; redraw(); true`, &ok),
		chromedp.Sleep(100*time.Millisecond),
		chromedp.FullScreenshot(&png, 100),
		chromedp.Evaluate(pointer("pointermove"), &ok),
		chromedp.Evaluate(pointer("pointerdown"), &ok),
		chromedp.Evaluate(pointer("pointerup"), &ok),
		chromedp.Sleep(200*time.Millisecond),
		chromedp.Evaluate(`location.hash`, &hash),
	)
	if err != nil || !strings.HasPrefix(hash, "#similar=") {
		t.Errorf("a click on a paper: hash %q (%v)", hash, err)
	}
	if out := os.Getenv("PAPERSEARCH_SCREENSHOT_MAP"); out != "" {
		os.WriteFile(out, png, 0o644)
	}
}

// TestPaperView: #paper=ID, where a feed links a paper without a web page
// of its own, shows that paper whole (title, authors, its abstract from
// first word to last) above the papers similar to it.
func TestPaperView(t *testing.T) {
	url, _ := server(t)
	all, err := seeds.NeurIPS2026()
	if err != nil {
		t.Fatal(err)
	}
	p := all[3]
	ctx := browser(t)
	var title, abstract, status string
	var similar int
	err = chromedp.Run(ctx,
		chromedp.Navigate(url+"/#paper="+neturl.QueryEscape(p.ID)),
		chromedp.WaitVisible(`//div[@id="status"][contains(., "similar to")]`, chromedp.BySearch),
		chromedp.Text("#paper h2", &title, chromedp.ByQuery),
		chromedp.Text("#paper .abstract", &abstract, chromedp.ByQuery),
		chromedp.Text("#status", &status, chromedp.ByID),
		chromedp.Evaluate(`document.querySelectorAll("#results .result").length`, &similar),
	)
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields(p.Abstract)
	if title != p.Title || !strings.HasPrefix(abstract, words[0]) || !strings.HasSuffix(abstract, words[len(words)-1]) || similar == 0 {
		t.Errorf("paper view: title %q, abstract %.60q…, %d similar (status %q)", title, abstract, similar, status)
	}
}
