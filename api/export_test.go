package api

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	neturl "net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/seeds/bibtex"
)

func TestExports(t *testing.T) {
	url, papers := server(t)
	get := func(accept string) (*http.Response, string) {
		resp, body := do(t, "POST", url+"/v1/search", "application/json", `{"query":"hand object contact","limit":3}`, "Accept", accept)
		return resp, string(body)
	}

	resp, body := get("text/csv")
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") || len(rows) != 4 ||
		strings.Join(rows[0], ",") != "rank,id,score,title,authors,venue,year,url,abstract,date,added" || rows[1][0] != "1" ||
		!strings.HasSuffix(rows[1][10], "Z") {
		t.Errorf("CSV: %v %q\n%s", err, resp.Header.Get("Content-Type"), body)
	}
	if resp.Header.Get("X-Next-Cursor") == "" {
		t.Error("CSV export lost the next cursor")
	}

	resp, body = get("application/x-ndjson")
	lines := strings.Split(strings.TrimSpace(body), "\n")
	var hit struct {
		ID   string
		Rank int
	}
	if resp.Header.Get("Content-Type") != "application/x-ndjson" || len(lines) != 3 || json.Unmarshal([]byte(lines[2]), &hit) != nil || hit.Rank != 3 {
		t.Errorf("NDJSON: %q\n%s", resp.Header.Get("Content-Type"), body)
	}

	resp, body = get("application/x-bibtex")
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-bibtex") || len(regexp.MustCompile(`(?m)^@[a-z]+\{`).FindAllString(body, -1)) != 3 ||
		strings.Count(body, "{") != strings.Count(body, "}") {
		t.Errorf("BibTeX: %q\n%s", resp.Header.Get("Content-Type"), body)
	}
	// JSON stays the default, and similar honours Accept too.
	// Every answer says it varies by Accept, JSON's too, so a cache does
	// not answer a CSV request with the JSON it kept.
	if resp, body := get("text/html, */*"); !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
		!slices.Contains(resp.Header.Values("Vary"), "Accept") {
		t.Errorf("default: %q, Vary %q, %.80s", resp.Header.Get("Content-Type"), resp.Header.Values("Vary"), body)
	}
	req, _ := http.NewRequest("GET", url+"/v1/papers/"+papers[3].ID+"/similar?limit=2", nil)
	req.Header.Set("Accept", "application/x-bibtex")
	r2, err := http.DefaultClient.Do(req)
	if err != nil || r2.StatusCode != 200 || !strings.HasPrefix(r2.Header.Get("Content-Type"), "application/x-bibtex") {
		t.Errorf("similar as BibTeX: %v %v", err, r2.Header)
	}
	r2.Body.Close()
}

func TestBibTeX(t *testing.T) {
	p := papersearch.Paper{ID: "acl2021-24", Title: "A {Bidirectional} Transformer & 100% _Alignment_", Authors: []string{"Jingyi Zhang", "Josef van Genabith"},
		Venue: "ACL", Year: 2021, URL: "https://aclanthology.org/2021.acl-long.24/", Abstract: "Costs $5 #1 ~ok^"}
	key := bibtex.Key(p)
	if !strings.HasPrefix(key, "zhang2021bidirectional_") {
		t.Errorf("key %q", key)
	}
	got := BibTeX([]papersearch.Hit{{ID: p.ID, Paper: p}})
	for _, want := range []string{"@inproceedings{" + key + ",", `title = {{A \textbraceleft{}Bidirectional\textbraceright{} Transformer \& 100\% \_Alignment\_}}`,
		"author = {Zhang, Jingyi and van Genabith, Josef}", "booktitle = {ACL}", "year = {2021}", `abstract = {Costs \$5 \#1 \textasciitilde{}ok\textasciicircum{}}`} {
		if !strings.Contains(got, want) {
			t.Errorf("BibTeX lacks %q:\n%s", want, got)
		}
	}
}

// TestBibTeXNoteResolves: the id that a paper's BibTeX note names, copied
// as the file has it (and as LaTeX's \url prints it), is a path that GET
// /v1/papers/{id} answers with that paper, whatever the id holds: LaTeX,
// underscores and dashes, a slash, a space, an accent, a literal %41.
func TestBibTeXNoteResolves(t *testing.T) {
	url, _ := server(t)
	ctx := context.Background()
	var stored []papersearch.Paper
	for i, id := range []string{`bibtex:Erd{\H{o}}s1959`, "iclr2019-B1x_q--t", "doi:10.1000/50%41off"} {
		stored = append(stored, papersearch.Paper{ID: id, Title: fmt.Sprintf("Random graphs %d", i), Abstract: "On the evolution of random graphs.",
			Authors: []string{"Paul Erdős", "Alfréd Rényi"}, Year: 1959})
	}
	if _, err := catalog.New(testServer.engine, catalog.Options{}).Ingest(ctx, stored, nil); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, p := range stored {
			catalog.New(testServer.engine, catalog.Options{}).Delete(ctx, p.ID)
		}
	}()
	note := regexp.MustCompile(`note = \{papersearch id: \\url\{([^{}]*)\}\}`)
	for _, id := range []string{stored[0].ID, stored[1].ID, stored[2].ID, "cs/0101001 ü"} {
		resp, bib := do(t, "GET", url+"/v1/papers/"+neturl.PathEscape(id), "", "", "Accept", "application/x-bibtex")
		m := note.FindSubmatch(bib)
		if resp.StatusCode != 200 || m == nil {
			t.Errorf("%s as BibTeX: %d, no note in\n%s", id, resp.StatusCode, bib)
			continue
		}
		resp, body := do(t, "GET", url+"/v1/papers/"+string(m[1]), "", "")
		var got papersearch.Paper
		if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil || got.ID != id {
			t.Errorf("GET /v1/papers/%s (the note of %q): %d %.200s", m[1], id, resp.StatusCode, body)
		}
	}
}

// TestBibTeXEntryType: a journal article is exported as an @article in
// its journal, a preprint as a @misc.
func TestBibTeXEntryType(t *testing.T) {
	for _, tt := range []struct{ typ, want string }{
		{papersearch.TypeJournalArticle, "@article{"}, {papersearch.TypePreprint, "@misc{"}, {"", "@inproceedings{"},
	} {
		p := papersearch.Paper{ID: "j1", Title: "A journal paper", Abstract: "x", Venue: "Journal of Machine Learning Research", Type: tt.typ}
		got := BibTeX([]papersearch.Hit{{ID: p.ID, Paper: p}})
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("type %q exported as\n%s\nwant %s…", tt.typ, got, tt.want)
		}
		if tt.typ == papersearch.TypeJournalArticle && !strings.Contains(got, "journal = {Journal of Machine Learning Research}") {
			t.Errorf("journal article without its journal:\n%s", got)
		}
	}
}

// TestCSVNeutralisesFormulas: text cells a spreadsheet would run (=, +,
// -, @, tab first) start with an apostrophe; a carriage return is a line
// break (no control character reaches a cell); numbers and other text are
// as they were.
func TestCSVNeutralisesFormulas(t *testing.T) {
	hits := []papersearch.Hit{{ID: "=cmd", Rank: 1, Score: -0.25, Paper: papersearch.Paper{ID: "=cmd", Title: "=HYPERLINK(\"http://evil.example\",\"x\")",
		Authors: []string{"+1+1", "B"}, Venue: "@SUM(A1)", Abstract: "-2+3", Year: 2020, Date: "2020-02", Added: time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)}},
		{ID: "ok", Rank: 2, Score: 0.5, Paper: papersearch.Paper{ID: "ok", Title: "\tTabbed", Abstract: "\rReturn", Venue: "ICML"}}}
	body, err := exportCSV(hits)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("%v %q", err, body)
	}
	want := [][]string{
		{"1", "'=cmd", "-0.250000", "'=HYPERLINK(\"http://evil.example\",\"x\")", "'+1+1; B", "'@SUM(A1)", "2020", "", "'-2+3", "2020-02", "2026-12-02T08:00:00Z"},
		{"2", "ok", "0.500000", "'\tTabbed", "", "ICML", "", "", "\nReturn", "", ""},
	}
	for i, w := range want {
		if strings.Join(rows[i+1], "|") != strings.Join(w, "|") {
			t.Errorf("row %d: %q, want %q", i+1, rows[i+1], w)
		}
	}
}

// TestExportTypeQuality: the format is negotiated by quality as RFC 9110
// says (q=0 rules a type out, the most specific range decides a type's
// quality, equals go to the range listed first), falling back to JSON;
// a route offers only the formats it produces.
func TestExportTypeQuality(t *testing.T) {
	all := []string{MediaCSV, MediaNDJSON, MediaBibTeX}
	for _, c := range []struct {
		accept, want string
		offers       []string
	}{
		{"", "", all},
		{"*/*", "", all},
		{"text/csv", MediaCSV, all},
		{"text/csv;q=0", "", all},
		{"application/json;q=0.5, text/csv;q=0.9", MediaCSV, all},
		{"application/x-bibtex;q=0.2, text/csv;q=0.8", MediaCSV, all},
		{"text/csv, application/json", MediaCSV, all},
		{"application/json, text/csv", "", all},
		{"text/*, application/json;q=0.9", MediaCSV, all},
		{"*/*, text/csv;q=0", "", all},
		{"*/*;q=0.1, application/x-ndjson", MediaNDJSON, all},
		{"application/*;q=0.5, application/x-bibtex", MediaBibTeX, all},
		{"application/problem+json, text/csv;q=0.5", "", all},
		{"text/csv;q=abc, application/x-bibtex;q=0.3", MediaBibTeX, all},
		{"text/csv;q=2", "", all},
		{"application/xml", "", all},
		{"*/*;q=0", "", all},
		{"text/csv, application/x-bibtex;q=0.5", MediaBibTeX, []string{MediaBibTeX}},
		{"text/csv", "", []string{MediaBibTeX}},
	} {
		if got := exportType(c.accept, c.offers...); got != c.want {
			t.Errorf("Accept %q offering %v: %q, want %q", c.accept, c.offers, got, c.want)
		}
	}
}
