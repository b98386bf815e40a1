package search_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/sqlite"
	"github.com/papersearch/papersearch/seeds"
)

// sliceSource yields papers, with a record error (no abstract) at every
// index listed in bad; stopAfter, if positive, cancels cancel once that
// many records are read, as an interrupt would.
type sliceSource struct {
	papers    []papersearch.Paper
	bad       map[int]bool
	next      int
	stopAfter int
	cancel    context.CancelFunc
}

func (s *sliceSource) Next() (papersearch.Paper, error) {
	if s.next == len(s.papers) {
		return papersearch.Paper{}, io.EOF
	}
	i := s.next
	s.next++
	if s.stopAfter > 0 && s.next == s.stopAfter {
		s.cancel()
	}
	if s.bad[i] {
		return papersearch.Paper{}, &seeds.LineError{Line: i + 1, Err: papersearch.ErrNoAbstract}
	}
	return s.papers[i], nil
}

func importPapers(n int) []papersearch.Paper {
	out := make([]papersearch.Paper, n)
	for i := range out {
		out[i] = papersearch.Paper{ID: fmt.Sprintf("src:%03d", i), Title: fmt.Sprintf("Paper %d", i),
			Abstract: fmt.Sprintf("Abstract %d about topic %d.", i, i%7), Year: 2020 + i%5}
	}
	return out
}

func importEngine(t *testing.T) (*search.Engine, search.Store, *recordingEmbedder) {
	t.Helper()
	emb := &recordingEmbedder{name: "test-model"}
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "p.db"), emb.Info())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	eng, err := search.NewEngine(store, emb, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return eng, store, emb
}

// contents lists every stored document: id, tags, hashes.
func contents(t *testing.T, s search.Store) string {
	t.Helper()
	var rows []string
	for cursor := ""; ; {
		docs, next, err := s.Scroll(context.Background(), cursor, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			rows = append(rows, fmt.Sprintf("%s %v %s %s", d.Paper.ID, d.Paper.Tags, d.TextHash, d.PaperHash))
		}
		if next == "" {
			break
		}
		cursor = next
	}
	slices.Sort(rows)
	return strings.Join(rows, "\n")
}

// TestImport: records without an abstract are counted and listed, not
// stored; every paper gets the import's tags; importing into a second
// collection keeps the first tag and embeds nothing again.
func TestImport(t *testing.T) {
	ctx := context.Background()
	eng, _, emb := importEngine(t)
	papers := importPapers(30)
	papers[4].Tags = []string{"Source-Tag"}
	src := &sliceSource{papers: papers, bad: map[int]bool{3: true, 17: true}}
	sum, err := eng.Import(ctx, src, search.ImportOptions{Tags: []string{"My-Library"}, Batch: 8})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Read != 30 || sum.Rejected != 2 || sum.NoAbstract != 2 || sum.New != 28 || len(sum.Rejections) != 2 ||
		sum.Rejections[1].Line != 18 {
		t.Errorf("summary %+v", sum)
	}
	if got, _ := eng.Get(ctx, "src:004"); strings.Join(got.Tags, ",") != "my-library,source-tag" {
		t.Errorf("src:004 tags %v", got.Tags)
	}
	if _, err := eng.Get(ctx, "src:003"); !errors.Is(err, search.ErrNotFound) {
		t.Errorf("a record without an abstract was stored: %v", err)
	}
	embedded := len(emb.texts)
	sum, err = eng.Import(ctx, &sliceSource{papers: papers[:10], bad: map[int]bool{3: true}}, search.ImportOptions{Tags: []string{"reading-group"}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Updated != 9 || sum.Embedded != 0 || len(emb.texts) != embedded {
		t.Errorf("second import: %+v, %d texts embedded", sum, len(emb.texts)-embedded)
	}
	if got, _ := eng.Get(ctx, "src:004"); strings.Join(got.Tags, ",") != "my-library,reading-group,source-tag" {
		t.Errorf("src:004 tags after a second import %v", got.Tags)
	}
	res, err := eng.Search(ctx, search.Query{Text: "topic", Mode: search.Lexical, Limit: 50,
		Filter: papersearch.Filter{Tags: []string{"reading-group"}}})
	if err != nil || len(res.Hits) != 9 {
		t.Errorf("search within reading-group: %d hits, %v", len(res.Hits), err)
	}
	if _, err := eng.Import(ctx, &sliceSource{}, search.ImportOptions{Tags: []string{"no spaces"}}); !errors.Is(err, papersearch.ErrBadTag) {
		t.Errorf("a malformed import tag: %v", err)
	}
}

// TestImportResumes: an import interrupted part way keeps what it stored,
// and running it again ends with exactly the store an uninterrupted import
// makes, embedding nothing twice.
func TestImportResumes(t *testing.T) {
	papers := importPapers(50)
	opts := search.ImportOptions{Tags: []string{"neurips-2026"}, Batch: 8}

	whole, wholeStore, _ := importEngine(t)
	if _, err := whole.Import(context.Background(), &sliceSource{papers: papers, bad: map[int]bool{9: true}}, opts); err != nil {
		t.Fatal(err)
	}

	eng, store, emb := importEngine(t)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := eng.Import(ctx, &sliceSource{papers: papers, bad: map[int]bool{9: true}, stopAfter: 27, cancel: cancel}, opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted import: err = %v", err)
	}
	n, _ := store.Count(context.Background())
	if n == 0 || n >= 49 {
		t.Fatalf("the interrupted import stored %d papers, want some but not all", n)
	}
	before := len(emb.texts)
	sum, err := eng.Import(context.Background(), &sliceSource{papers: papers, bad: map[int]bool{9: true}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Unchanged != n || sum.Embedded != 49-n || len(emb.texts)-before != 49-n {
		t.Errorf("resumed import: %+v; %d stored before, %d texts embedded", sum, n, len(emb.texts)-before)
	}
	if got, want := contents(t, store), contents(t, wholeStore); got != want {
		t.Errorf("resumed store differs from an uninterrupted one:\n%s\n---\n%s", got, want)
	}
}
