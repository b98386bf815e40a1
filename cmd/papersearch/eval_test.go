package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// evalFiles writes a small BEIR corpus, queries and judgements.
func evalFiles(t *testing.T) (corpus, queries, qrels string) {
	dir := t.TempDir()
	corpus, queries, qrels = filepath.Join(dir, "corpus.jsonl"), filepath.Join(dir, "queries.jsonl"), filepath.Join(dir, "qrels.tsv")
	os.WriteFile(corpus, []byte(strings.Join([]string{
		`{"_id":"d1","title":"Graph neural networks for molecules","text":"We predict molecular properties with message passing on atom graphs."}`,
		`{"_id":"d2","title":"Speech recognition with transformers","text":"An end-to-end acoustic model transcribes spoken audio into text."}`,
		`{"_id":"d3","title":"Protein structure prediction","text":"Deep networks fold amino acid sequences into 3D protein structures."}`,
		`{"_id":"d4","title":"Sparse regression priors","text":"A spike-and-slab prior selects a few nonzero regression coefficients."}`,
	}, "\n")), 0o644)
	os.WriteFile(queries, []byte(strings.Join([]string{
		`{"_id":"q1","text":"message passing on atom graphs to predict molecular properties"}`, // the words of d1
		`{"_id":"q2","text":"turning voice recordings into written words"}`,                    // d2, paraphrased
		`{"_id":"q3","text":"how do amino acid chains take their three dimensional shape"}`,
		`{"_id":"q4","text":"choosing few variables in a linear model"}`,
		`{"_id":"q5","text":"unjudged"}`,
	}, "\n")), 0o644)
	os.WriteFile(qrels, []byte("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td3\t1\nq4\td4\t1\n"), 0o644)
	return corpus, queries, qrels
}

// eval measures a corpus end to end: every mode, the dev half by
// default and the held-out half on request, each figure per overlap band
// with its paired difference from the default; --overlap only measures
// overlap; --titles queries with the titles.
func TestEval(t *testing.T) {
	setEnv(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("PAPERSEARCH_LOG_LEVEL", "warn")
	t.Setenv("PAPERSEARCH_MODEL", "all-MiniLM-L6-v2")
	ctx := context.Background()
	corpus, queries, qrels := evalFiles(t)

	var out bytes.Buffer
	if err := run(ctx, []string{"eval", "--corpus", corpus, "--queries", queries, "--qrels", qrels, "--overlap"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"q1  100%", "q2  0%", "all: 4 queries", "<40%: "} {
		if !strings.Contains(strings.Join(strings.Fields(out.String()), "  "), strings.Join(strings.Fields(want), "  ")) {
			t.Errorf("--overlap output lacks %q:\n%s", want, out.String())
		}
	}

	type report struct {
		Split   string `json:"split"`
		Results []struct {
			Mode    string  `json:"mode"`
			Band    string  `json:"band"`
			Queries int     `json:"queries"`
			First   float64 `json:"first"`
			Delta   struct {
				First float64 `json:"first"`
			} `json:"delta"`
		} `json:"results"`
		Hybrid struct {
			Outcomes []struct {
				ID string `json:"id"`
			} `json:"outcomes"`
		} `json:"hybrid"`
	}
	queriesIn := map[string]int{}
	for _, split := range []string{"dev", "held-out"} {
		args := []string{"eval", "--corpus", corpus, "--queries", queries, "--qrels", qrels, "--json"}
		if split == "held-out" {
			args = append(args, "--held-out")
		}
		out.Reset()
		if err := run(ctx, args, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		var r report
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("%v:\n%s", err, out.String())
		}
		if r.Split != split || len(r.Hybrid.Outcomes) != 4 {
			t.Errorf("split %q with %d outcomes, want %s and 4 (every judged query)", r.Split, len(r.Hybrid.Outcomes), split)
		}
		for _, x := range r.Results {
			if x.Band == "all" {
				queriesIn[x.Mode] += x.Queries
			}
			if x.Mode == "hybrid" && x.Delta.First != 0 {
				t.Errorf("the default differs from itself: %+v", x)
			}
		}
	}
	for _, mode := range []string{"lexical", "dense", "hybrid"} {
		if queriesIn[mode] != 4 {
			t.Errorf("%s: the two halves hold %d queries, want the 4 judged", mode, queriesIn[mode])
		}
	}

	// A baseline from an earlier run: the same build differs by nothing.
	base := filepath.Join(t.TempDir(), "base.json")
	out.Reset()
	if err := run(ctx, []string{"eval", "--corpus", corpus, "--queries", queries, "--qrels", qrels, "--mode", "hybrid", "--json"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(base, out.Bytes(), 0o644)
	out.Reset()
	if err := run(ctx, []string{"eval", "--corpus", corpus, "--queries", queries, "--qrels", qrels, "--mode", "hybrid", "--baseline", base}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), base+"'s hybrid") || !strings.Contains(out.String(), "+0.0000 ± 0.0000") {
		t.Errorf("--baseline output:\n%s", out.String())
	}
	if err := run(ctx, []string{"eval", "--corpus", corpus, "--queries", queries, "--qrels", qrels, "--baseline", corpus}, io.Discard, io.Discard); err == nil {
		t.Error("a baseline that is not eval's JSON was accepted")
	}

	out.Reset()
	if err := run(ctx, []string{"eval", "--corpus", corpus, "--titles", "--mode", "lexical"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "lexical") {
		t.Errorf("--titles output:\n%s", out.String())
	}
	if err := run(ctx, []string{"eval", "--corpus", corpus, "--titles", "--queries", queries, "--qrels", qrels}, io.Discard, io.Discard); err == nil {
		t.Error("--titles with --queries was accepted")
	}
}
