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

// TestPrintResultsWithoutControls: the table and the JSON that search,
// similar and recommend print carry no control character of a paper
// stored with them (before papersearch.Complete removed them), so stored
// text cannot drive the terminal.
func TestPrintResultsWithoutControls(t *testing.T) {
	evil := "Title\x1b]0;pwned\x07 \x1b[31mred\u009b2J\u202eolleh\tcol\x00"
	res := wire.SearchResponse{Index: papersearch.IndexInfo{Papers: 1}, Results: []papersearch.Hit{{Rank: 1, ID: "p1", Score: 0.5,
		Paper: papersearch.Paper{ID: "p1", Title: evil, Abstract: evil, Venue: "V\x1b[2J", Year: 2024, Authors: []string{"A\u202eB"}}}}}
	for _, asJSON := range []bool{false, true} {
		var out bytes.Buffer
		if err := printResults(&out, res, asJSON); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		if i := strings.IndexFunc(s, func(r rune) bool { return papersearch.Control(r) || !asJSON && r == '\t' }); i >= 0 {
			t.Errorf("json %v: a control character at %d: %q", asJSON, i, s)
		}
		if !strings.Contains(s, "red") || !strings.Contains(s, "olleh") {
			t.Errorf("json %v: the visible text is gone: %q", asJSON, s)
		}
	}
}

// TestPrintResultsVenueAndYear: a title is followed by its venue and
// year in parentheses, either alone when the other is missing, and by
// nothing when both are.
func TestPrintResultsVenueAndYear(t *testing.T) {
	for _, c := range []struct {
		venue string
		year  int
		want  string
	}{
		{"NeurIPS", 2024, "T (NeurIPS 2024)"},
		{"", 2020, "T (2020)"},
		{" ICML ", 0, "T (ICML)"},
		{"", 0, "T"},
	} {
		res := wire.SearchResponse{Index: papersearch.IndexInfo{Papers: 1}, Results: []papersearch.Hit{{Rank: 1, ID: "p1", Score: 0.5,
			Paper: papersearch.Paper{ID: "p1", Title: "T", Venue: c.venue, Year: c.year}}}}
		var out bytes.Buffer
		if err := printResults(&out, res, false); err != nil {
			t.Fatal(err)
		}
		line := strings.TrimSpace(strings.Split(out.String(), "\n")[1])
		if !strings.HasSuffix(line, "p1  "+c.want) {
			t.Errorf("venue %q year %d: %q, want it to end in %q", c.venue, c.year, line, c.want)
		}
	}
}

// TestConfigNamesBadValues: a setting whose value is not of its kind is
// refused naming the variable, the value and what it takes.
func TestConfigNamesBadValues(t *testing.T) {
	for env, want := range map[string]string{
		"PAPERSEARCH_MAX_BODY":            `PAPERSEARCH_MAX_BODY="abc" is not a whole number`,
		"PAPERSEARCH_EMBEDDINGS_OPEN":     `PAPERSEARCH_EMBEDDINGS_OPEN="abc" is not true or false`,
		"PAPERSEARCH_QUERY_EMBED_TIMEOUT": `PAPERSEARCH_QUERY_EMBED_TIMEOUT="abc" is not a duration such as 500ms, 30s or 5m`,
	} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "abc")
			_, err := loadConfig()
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%v, want it to say %s", err, want)
			}
		})
	}
}
