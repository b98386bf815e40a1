package seeds

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
)

func TestNeurIPS2026(t *testing.T) {
	papers, err := NeurIPS2026()
	if err != nil {
		t.Fatal(err)
	}
	if len(papers) != 19 {
		t.Fatalf("got %d seed papers, want 19", len(papers))
	}
	seen := map[string]bool{}
	for _, p := range papers {
		if seen[p.ID] {
			t.Errorf("duplicate id %s", p.ID)
		}
		seen[p.ID] = true
		if p.Title == "" || p.Abstract == "" || p.Year != 2026 || p.Venue != "NeurIPS" {
			t.Errorf("incomplete seed paper %+v", p)
		}
		if strings.ContainsAny(p.Title, "*$\\{}") {
			t.Errorf("title %q keeps markup", p.Title)
		}
	}
	if !strings.HasPrefix(papers[0].Abstract, "Imitation learning (IL)") {
		t.Errorf("first seed abstract starts %q; the header line was not skipped", papers[0].Abstract[:40])
	}
}

func TestTextFormat(t *testing.T) {
	const corpus = "Some Corpus Header\n\nFirst abstract, line one.\nLine two.\n\n\n\nSecond abstract.\n"
	papers, rejected, err := ReadAll(strings.NewReader(corpus), 0)
	if err != nil || len(rejected) != 0 {
		t.Fatal(err, rejected)
	}
	if len(papers) != 2 {
		t.Fatalf("got %d papers, want 2", len(papers))
	}
	if got, want := papers[0].Abstract, "First abstract, line one. Line two."; got != want {
		t.Errorf("abstract = %q, want %q", got, want)
	}
	if got, want := papers[1].Title, "Second abstract"; got != want {
		t.Errorf("derived title = %q, want %q", got, want)
	}
}

func TestIDsAreStable(t *testing.T) {
	a := "Header\n\nAlpha abstract about graphs.\n\nBeta abstract about  speech.\n"
	b := "Other header\n\nGamma abstract.\n\nbeta abstract ABOUT speech.\n\nAlpha abstract about graphs.\n"
	pa, _, _ := ReadAll(strings.NewReader(a), Text)
	pb, _, _ := ReadAll(strings.NewReader(b), Text)
	if pa[0].ID != pb[2].ID {
		t.Errorf("id of the same abstract changed with its position: %s vs %s", pa[0].ID, pb[2].ID)
	}
	if pa[1].ID != pb[1].ID {
		t.Errorf("id changed with case and spacing: %s vs %s", pa[1].ID, pb[1].ID)
	}
	if pa[0].ID == pa[1].ID {
		t.Error("different abstracts share an id")
	}
}

func TestJSONL(t *testing.T) {
	corpus := strings.Join([]string{
		`{"id":"a1","title":"Graph nets","abstract":"We study graphs.","authors":["Ada Lovelace"," Alan  Turing "],"venue":"ICML","year":2020,"url":"https://x.org/a1"}`,
		`{"id":"a2","title":"Broken", "abstract": `,
		``,
		`{"title":"No id","abstract":"An abstract without an id.","authors":["Grace Hopper","Edsger Dijkstra"],"year":2019.0}`,
		`{"id":"a4","title":"Empty","abstract":"  "}`,
		`{"id":"a5","abstract":"Bad year.","year":"soon"}`,
		"{\"id\":\"a6\",\"abstract\":\"bad \xff utf8\"}",
		`{"id":"a7","abstract":"Authors of the wrong type.","authors":42}`,
		`[1,2,3]`,
		`{"id":"a10","abstract":"A year as a string, which the API refuses.","year":"2020"}`,
		`{"id":"a11","abstract":"Authors as one string, which the API refuses.","authors":"Grace Hopper; Edsger Dijkstra"}`,
	}, "\n")
	papers, rejected, err := ReadAll(strings.NewReader(corpus), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(papers) != 2 {
		t.Fatalf("got %d papers, want 2: %+v", len(papers), papers)
	}
	want := papersearch.Paper{ID: "a1", Title: "Graph nets", Abstract: "We study graphs.",
		Authors: []string{"Ada Lovelace", "Alan Turing"}, Venue: "ICML", Year: 2020, URL: "https://x.org/a1"}
	if got := papers[0]; got.ID != want.ID || got.Title != want.Title || strings.Join(got.Authors, "|") != "Ada Lovelace|Alan Turing" || got.Year != 2020 || got.URL != want.URL {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if p := papers[1]; p.ID != papersearch.DeriveID(p.Abstract) || p.Year != 2019 || len(p.Authors) != 2 {
		t.Errorf("record without id: %+v", p)
	}
	wantLines := []int{2, 5, 6, 7, 8, 9, 10, 11}
	if len(rejected) != len(wantLines) {
		t.Fatalf("rejected %v, want lines %v", rejected, wantLines)
	}
	for i, le := range rejected {
		if le.Line != wantLines[i] {
			t.Errorf("rejection %d at line %d, want %d (%v)", i, le.Line, wantLines[i], le)
		}
		if le.Error() == "" || !strings.HasPrefix(le.Error(), "line ") {
			t.Errorf("rejection message %q does not name its line", le.Error())
		}
	}
	if !errors.Is(rejected[1], papersearch.ErrNoAbstract) || !errors.Is(rejected[3], papersearch.ErrInvalidUTF8) {
		t.Errorf("rejections do not wrap their reasons: %v", rejected)
	}
}

func TestGzipAndLongLines(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(`{"id":"z","abstract":"` + strings.Repeat("x", MaxRecordBytes+10) + `"}` + "\n"))
	zw.Write([]byte(`{"id":"ok","abstract":"fine"}` + "\n"))
	zw.Close()
	papers, rejected, err := ReadAll(&buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(papers) != 1 || papers[0].ID != "ok" {
		t.Errorf("papers = %+v, want the one valid record after the long line", papers)
	}
	if len(rejected) != 1 || rejected[0].Line != 1 || !errors.Is(rejected[0], ErrTooLong) {
		t.Errorf("rejected = %v, want line 1 too long", rejected)
	}
}

// failingReader gives its bytes, then err.
type failingReader struct {
	b   []byte
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.b) == 0 {
		return 0, f.err
	}
	n := copy(p, f.b)
	f.b = f.b[n:]
	return n, nil
}

// TestGzipErrors: a gzip stream cut short or corrupt is the file's fault
// (a FormatError saying which); the reader beneath failing is not.
func TestGzipErrors(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for i := range 2000 {
		fmt.Fprintf(zw, `{"id":"p%d","abstract":"abstract %d of many"}`+"\n", i, i*7919)
	}
	zw.Close()
	whole := buf.Bytes()
	corrupt := bytes.Clone(whole)
	corrupt[len(corrupt)-5] ^= 0xff // the trailer's length
	diskErr := errors.New("input/output error")
	for _, tt := range []struct {
		name   string
		r      io.Reader
		format bool
		says   string
	}{
		{"cut short", bytes.NewReader(whole[:len(whole)/2]), true, "is the file cut short?"},
		{"corrupt", bytes.NewReader(corrupt), true, "the file is corrupt"},
		{"the disk fails", &failingReader{b: whole[:len(whole)/2], err: diskErr}, false, diskErr.Error()},
		{"header cut short", bytes.NewReader(whole[:5]), true, "is the file cut short?"},
		{"header corrupt", bytes.NewReader(append([]byte{0x1f, 0x8b, 99}, whole[3:]...)), true, "the file is corrupt"},
	} {
		_, _, err := ReadAll(tt.r, 0)
		var fe *FormatError
		if err == nil || errors.As(err, &fe) != tt.format || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: %v (a FormatError: %v), want one saying %q", tt.name, err, errors.As(err, &fe), tt.says)
		}
	}
}

func TestDeriveTitle(t *testing.T) {
	tests := []struct{ abstract, want string }{
		{"We introduce $\\textbf{UniCon3R}$, a unified framework. More text.", "We introduce UniCon3R, a unified framework"},
		{"**This position paper argues** that X. Then Y.", "This position paper argues that X"},
		{"Methods (e.g. BC) fail. Next.", "Methods (e.g. BC) fail"},
		{strings.Repeat("word ", 40), strings.TrimSpace(strings.Repeat("word ", 19)) + "…"},
	}
	for _, tt := range tests {
		if got := papersearch.DeriveTitle(tt.abstract); got != tt.want {
			t.Errorf("DeriveTitle(%q) = %q, want %q", tt.abstract, got, tt.want)
		}
	}
}
