package api

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/papersearch/papersearch/internal/testenv"
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

// TestSearchPage drives the page in headless Chromium as a person would:
// types a question, sees results with highlighted words and explanations,
// follows "Similar papers", gets BibTeX, and saves a screenshot.
func TestSearchPage(t *testing.T) {
	exe := chromium(t)
	url, _ := server(t)
	// Chromium may still write its profile while shutting down, so the
	// profile is removed after the browser, ignoring what it left behind.
	profile, err := os.MkdirTemp("", "papersearch-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(profile)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(profile), chromedp.WindowSize(1200, 1400))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	var firstTitle, status, marks, why string
	var count int
	err = chromedp.Run(ctx,
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
