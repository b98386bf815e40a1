package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
)

// TestEveryCommandAnswersHelp: each subcommand, asked -h or --help (alone
// or after other arguments), prints its usage to stdout and succeeds, even
// with a configuration that would not load; the commands with flags list
// them.
func TestEveryCommandAnswersHelp(t *testing.T) {
	t.Setenv("PAPERSEARCH_LOG_LEVEL", "loud") // help needs no configuration
	flags := map[string][]string{
		"search": {"-limit", "-mode", "-year-min", "-venue", "-author", "-tag", "-aspect"}, "similar": {"-limit", "-mode", "-aspect", "-tag"},
		"recommend": {"-limit", "-method", "-since", "-by", "-tag"},
		"import":    {"-tag", "-max", "-category"}, "bench": {"-clients", "-duration", "-store"}, "eval": {"-corpus", "-qrels", "-mode"},
	}
	var usage bytes.Buffer
	if err := run(context.Background(), []string{"help"}, &usage, io.Discard); err != nil {
		t.Fatal(err)
	}
	for cmd := range synopses {
		if cmd != "serve" && !strings.Contains(usage.String(), "\n  papersearch "+cmd+" ") {
			t.Errorf("papersearch help does not list %s:\n%s", cmd, usage.String())
		}
		for _, args := range [][]string{{cmd, "-h"}, {cmd, "--help"}, {cmd, "x", "--help"}} {
			var out, errOut bytes.Buffer
			if err := run(context.Background(), args, &out, &errOut); err != nil {
				t.Errorf("papersearch %s: %v", strings.Join(args, " "), err)
				continue
			}
			if !strings.HasPrefix(out.String(), "Usage: papersearch") || errOut.Len() > 0 {
				t.Errorf("papersearch %s printed %q, stderr %q", strings.Join(args, " "), out.String(), errOut.String())
			}
			for _, f := range flags[cmd] {
				if !strings.Contains(out.String(), "  "+f+" ") {
					t.Errorf("papersearch %s lists no %s:\n%s", strings.Join(args, " "), f, out.String())
				}
			}
		}
	}
	if err := run(context.Background(), []string{"frobnicate", "-h"}, io.Discard, io.Discard); err == nil {
		t.Error("an unknown command's -h succeeded")
	}
}

// TestWrongFormatAndEmptyStore: importing a file in another format than
// the one named reads no record and says which format it looks like
// (it used to print "0 records" and succeed); the results of a search of
// an empty store say the store is empty.
func TestWrongFormatAndEmptyStore(t *testing.T) {
	dir := setEnv(t)
	ctx := context.Background()
	for name, tc := range map[string]struct{ content, kind, want string }{
		"lib.json": {`[{"id":"x","title":"T","abstract":"A paper."}]`, "bibtex", "import csl FILE"},
		"lib.bib":  {"@article{k, title={T}, abstract={A paper.}}", "csl", "import bibtex FILE"},
		"p.jsonl":  {`{"id":"x","abstract":"A paper."}` + "\n", "bibtex", "papersearch ingest FILE"},
	} {
		path := dir + "/" + name
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		err := run(ctx, []string{"import", tc.kind, path}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("import %s %s: %v, want it to suggest %q", tc.kind, name, err, tc.want)
		}
	}
	var out bytes.Buffer
	if err := printResults(&out, wire.SearchResponse{Results: []papersearch.Hit{}}, false); err != nil || !strings.Contains(out.String(), "the store is empty") {
		t.Errorf("search of an empty store: %v %q", err, out.String())
	}
}
