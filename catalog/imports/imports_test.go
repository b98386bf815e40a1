package imports

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
)

// pager is a positioned source of n papers, read from its position on.
type pager struct {
	n, at int
	seeks []string
}

func (p *pager) Next() (papersearch.Paper, error) {
	if p.at == p.n {
		return papersearch.Paper{}, io.EOF
	}
	p.at++
	return papersearch.Paper{}, nil
}
func (p *pager) Position() string { return strings.Repeat("x", p.at) }
func (p *pager) Seek(pos string) error {
	p.seeks = append(p.seeks, pos)
	p.at = len(pos)
	return nil
}

// TestResume: a network source's checkpoint is written after a stored
// batch and read by the same import run again (same source, target, max,
// tags in any case or order, store), which starts after it; another
// import, or a restart, starts from the beginning; the checkpoint goes
// once the source is read to its end.
func TestResume(t *testing.T) {
	ctx := context.Background()
	c := Config{DataDir: t.TempDir(), Store: "embedded /x.db"}
	r := Request{Kind: "arxiv", Target: "cat:cs.LG", Max: 100, Tags: []string{"b", "a"}}
	src, at, err := c.resume(r, []string{"b", "a"}, &pager{n: 10})
	if err != nil || at != "" {
		t.Fatalf("first run: %q, %v", at, err)
	}
	src.Next()
	src.Next()
	if err := src.(interface {
		Checkpoint(context.Context, bool) error
	}).Checkpoint(ctx, false); err != nil {
		t.Fatal(err)
	}
	again := &pager{n: 10}
	if _, at, err := c.resume(r, []string{"A", "b"}, again); err != nil || at != "xx" || again.at != 2 {
		t.Errorf("the same import again resumed at %q (source at %d), %v; want after 2 records", at, again.at, err)
	}
	for name, other := range map[string]func() (Request, []string, Config){
		"another max":   func() (Request, []string, Config) { o := r; o.Max = 5; return o, r.Tags, c },
		"another tag":   func() (Request, []string, Config) { return r, []string{"a"}, c },
		"another store": func() (Request, []string, Config) { o := c; o.Store = "qdrant u c"; return r, r.Tags, o },
		"restart":       func() (Request, []string, Config) { o := r; o.Restart = true; return o, r.Tags, c },
	} {
		req, tags, cfg := other()
		if _, at, err := cfg.resume(req, tags, &pager{n: 10}); err != nil || at != "" {
			t.Errorf("%s: resumed at %q, %v; want the start", name, at, err)
		}
	}
	src, _, _ = c.resume(r, r.Tags, &pager{n: 10})
	src.(interface {
		Checkpoint(context.Context, bool) error
	}).Checkpoint(ctx, true)
	if _, at, _ := c.resume(r, r.Tags, &pager{n: 10}); at != "" {
		t.Errorf("after the end, resumed at %q", at)
	}
}

// TestRequest: what POST /v1/imports may ask, each refusal naming its
// field, and the sources listed once (help, the API and IsFile agree).
func TestRequest(t *testing.T) {
	max := func(n int) *int { return &n }
	for _, tc := range []struct {
		req   JobRequest
		field string
	}{
		{JobRequest{Source: "zotero", Content: "x"}, "source"},
		{JobRequest{Source: "arxiv-snapshot", Content: "x"}, "source"}, // the command line's only
		{JobRequest{Source: "bibtex"}, "content"},
		{JobRequest{Source: "bibtex", Content: "x", Target: "y"}, "target"},
		{JobRequest{Source: "bibtex", Target: "/tmp/x.bib"}, "target"}, // a path: the file goes in content
		{JobRequest{Source: "bibtex", Content: "x", Max: max(3)}, "max"},
		{JobRequest{Source: "arxiv", Target: "q", Content: "x"}, "content"},
		{JobRequest{Source: "openalex"}, "target"},
		{JobRequest{Source: "arxiv", Target: "graphs\x00\x1b[2J"}, "target"},
		{JobRequest{Source: "arxiv", Target: "q", Max: max(0)}, "max"},
		{JobRequest{Source: "arxiv", Target: "q", Max: max(MaxPapers + 1)}, "max"},
		{JobRequest{Source: "csl", Content: "[]", Tags: []string{"no spaces"}}, "tags"},
		{JobRequest{Source: "openreview", Target: "NeurIPS.cc/2026/Conference"}, ""},
	} {
		r, err := request(tc.req)
		var fe *papersearch.FieldError
		switch {
		case tc.field == "" && (err != nil || r.Max != DefaultPapers || r.Kind != tc.req.Source):
			t.Errorf("%+v: %+v, %v", tc.req, r, err)
		case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, ErrBadRequest)):
			t.Errorf("%+v: %v; want a refusal of %s", tc.req, err, tc.field)
		}
	}
	for _, k := range kinds {
		if !strings.Contains(Usage(), k.usage) {
			t.Errorf("help does not list %s", k.name)
		}
		if file, ok := IsFile(k.name); !ok || file != k.file {
			t.Errorf("IsFile(%s) = %v, %v", k.name, file, ok)
		}
	}
	if got := strings.Join(HTTPSources(), ","); got != "bibtex,csl,arxiv,openalex,openreview" {
		t.Errorf("HTTP sources %s", got)
	}
}
