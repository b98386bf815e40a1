package seeds_test

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
	"github.com/papersearch/papersearch/seeds/bibtex"
	"github.com/papersearch/papersearch/seeds/csl"
)

// controlText holds each kind of character papersearch.Control names.
const controlText = "NUL\x00 BEL\x07 ESC\x1b[31m DEL\x7f NEL\u0085 CSI\u009b RLO\u202e LRI\u2066 CR\r end"

// TestReadersDropControlCharacters: ingest's JSONL and text readers and
// the library imports (BibTeX, CSL JSON) give papers without control
// characters, whatever the file held; the online sources' readers end in
// the same papersearch.Complete.
func TestReadersDropControlCharacters(t *testing.T) {
	rec, _ := json.Marshal(map[string]any{"id": "c1", "title": "T " + controlText, "abstract": "A " + controlText,
		"venue": "V " + controlText, "authors": []string{"Ada " + controlText}})
	item, _ := json.Marshal([]map[string]any{{"id": "c2", "type": "article-journal", "title": "T " + controlText,
		"abstract": "A " + controlText, "container-title": "V " + controlText, "author": []map[string]string{{"family": "Lovelace\x1b", "given": "Ada\u202e"}}}})
	bib := "@article{c3, title = {T " + controlText + "}, abstract = {A " + controlText + "}, journal = {V " + controlText +
		"}, author = {Lovelace\x07, Ada and Hopper, Grace\u202e}}"
	var papers []papersearch.Paper
	for _, format := range []seeds.Format{seeds.JSONL, seeds.Text} {
		in := string(rec)
		if format == seeds.Text {
			in = "Corpus header\n\nAn abstract " + controlText + "\n"
		}
		ps, bad, err := seeds.ReadAll(strings.NewReader(in), format)
		if err != nil || len(bad) != 0 || len(ps) != 1 {
			t.Fatalf("%v: %d papers, %v, %v", format, len(ps), bad, err)
		}
		papers = append(papers, ps...)
	}
	next := func(name string, n func() (papersearch.Paper, error)) {
		for {
			p, err := n()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			papers = append(papers, p)
		}
	}
	next("CSL", csl.NewReader(strings.NewReader(string(item))).Next)
	next("BibTeX", bibtex.NewReader(strings.NewReader(bib)).Next)
	if len(papers) != 4 {
		t.Fatalf("%d papers, want 4", len(papers))
	}
	for _, p := range papers {
		for name, v := range map[string]string{"title": p.Title, "abstract": p.Abstract, "venue": p.Venue, "authors": strings.Join(p.Authors, "|")} {
			if strings.ContainsFunc(v, papersearch.Control) {
				t.Errorf("%s: %s holds a control character: %q", p.ID, name, v)
			}
		}
		if !strings.Contains(p.Abstract, "end") {
			t.Errorf("%s: the abstract lost its text: %q", p.ID, p.Abstract)
		}
	}
}
