package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/searchtest"
	"github.com/papersearch/papersearch/search/storage"
	"github.com/papersearch/papersearch/search/storetest"
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

func importEngine(t *testing.T) (*search.Engine, storage.Store, *searchtest.Recorder) {
	t.Helper()
	emb := &searchtest.Recorder{Name: "test-model"}
	eng, store := searchtest.Engine(t, emb, search.Options{})
	return eng, store, emb
}

// TestIngestEmbedsAPaperStoredWithoutSentences: a paper stored with its
// vector but no sentence vectors and no paper hash, as a store upgraded
// from before pooled sentence vectors keeps it, is embedded again by the
// next ingest of it; after that it is unchanged.
func TestIngestEmbedsAPaperStoredWithoutSentences(t *testing.T) {
	ctx := context.Background()
	eng, store, _ := importEngine(t)
	p := papersearch.Paper{ID: "p1", Title: "Folding", Abstract: "Proteins fold. We use graphs. It works."}
	old := storage.Document{Paper: p, Vector: hashvec.Of(p.Text(), storetest.Model.Dim), TextHash: storage.FingerprintOf(p).TextHash}
	if err := store.Upsert(ctx, []storage.Document{old}); err != nil {
		t.Fatal(err)
	}
	sum, err := catalog.New(eng, catalog.Options{}).Ingest(ctx, []papersearch.Paper{p}, nil)
	if err != nil || sum.Updated != 1 || sum.Embedded != 1 || sum.Reused != 0 {
		t.Fatalf("ingest of a paper stored without sentences: %+v, %v; want it updated and embedded", sum, err)
	}
	if got, err := store.Sentences(ctx, []string{"p1"}); err != nil || len(got["p1"]) != 3 {
		t.Errorf("its sentences after the ingest: %+v, %v; want 3", got["p1"], err)
	}
	if sum, err := catalog.New(eng, catalog.Options{}).Ingest(ctx, []papersearch.Paper{p}, nil); err != nil || sum.Unchanged != 1 || sum.Embedded != 0 {
		t.Errorf("ingest again: %+v, %v; want it unchanged", sum, err)
	}
}

// contents lists every stored document: id, tags, hashes.
func contents(t *testing.T, s storage.Store) string {
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
	sum, err := catalog.New(eng, catalog.Options{}).Import(ctx, src, catalog.ImportOptions{Tags: []string{"My-Library"}, Batch: 8})
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
	if _, err := eng.Get(ctx, "src:003"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a record without an abstract was stored: %v", err)
	}
	embedded := len(emb.Texts())
	sum, err = catalog.New(eng, catalog.Options{}).Import(ctx, &sliceSource{papers: papers[:10], bad: map[int]bool{3: true}}, catalog.ImportOptions{Tags: []string{"reading-group"}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Updated != 9 || sum.Embedded != 0 || len(emb.Texts()) != embedded {
		t.Errorf("second import: %+v, %d texts embedded", sum, len(emb.Texts())-embedded)
	}
	if got, _ := eng.Get(ctx, "src:004"); strings.Join(got.Tags, ",") != "my-library,reading-group,source-tag" {
		t.Errorf("src:004 tags after a second import %v", got.Tags)
	}
	res, err := eng.Search(ctx, search.Query{Text: "topic", Mode: search.Lexical, Limit: 50,
		Filter: papersearch.Filter{Tags: []string{"reading-group"}}})
	if err != nil || len(res.Hits) != 9 {
		t.Errorf("search within reading-group: %d hits, %v", len(res.Hits), err)
	}
	if _, err := catalog.New(eng, catalog.Options{}).Import(ctx, &sliceSource{}, catalog.ImportOptions{Tags: []string{"no spaces"}}); !errors.Is(err, papersearch.ErrBadTag) {
		t.Errorf("a malformed import tag: %v", err)
	}
}

// TestImportResumes: an import interrupted part way keeps what it stored,
// and running it again ends with exactly the store an uninterrupted import
// makes, embedding nothing twice.
func TestImportResumes(t *testing.T) {
	papers := importPapers(50)
	opts := catalog.ImportOptions{Tags: []string{"neurips-2026"}, Batch: 8}

	whole, wholeStore, _ := importEngine(t)
	if _, err := catalog.New(whole, catalog.Options{}).Import(context.Background(), &sliceSource{papers: papers, bad: map[int]bool{9: true}}, opts); err != nil {
		t.Fatal(err)
	}

	eng, store, emb := importEngine(t)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := catalog.New(eng, catalog.Options{}).Import(ctx, &sliceSource{papers: papers, bad: map[int]bool{9: true}, stopAfter: 27, cancel: cancel}, opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted import: err = %v", err)
	}
	n, _ := store.Count(context.Background())
	if n == 0 || n >= 49 {
		t.Fatalf("the interrupted import stored %d papers, want some but not all", n)
	}
	before := len(emb.Texts())
	sum, err := catalog.New(eng, catalog.Options{}).Import(context.Background(), &sliceSource{papers: papers, bad: map[int]bool{9: true}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Each paper's abstract is one sentence: two texts a paper.
	if sum.Unchanged != n || sum.Embedded != 49-n || len(emb.Texts())-before != 2*(49-n) {
		t.Errorf("resumed import: %+v; %d stored before, %d texts embedded", sum, n, len(emb.Texts())-before)
	}
	if got, want := contents(t, store), contents(t, wholeStore); got != want {
		t.Errorf("resumed store differs from an uninterrupted one:\n%s\n---\n%s", got, want)
	}
}

// TestImportMergesVersions: the arXiv preprint and the conference paper of
// one work, matched by title and first author, by DOI, or within one
// batch, become one paper holding both sources, with the published venue
// and year; importing everything again changes nothing; the paper is
// found by any of its ids, and a search returns the work once.
func TestImportMergesVersions(t *testing.T) {
	ctx := context.Background()
	eng, store, emb := importEngine(t)
	arx := func(id string) papersearch.Source { s, _ := seeds.Arxiv(id); return s }
	doi := func(d string) papersearch.Source { s, _ := seeds.DOI(d); return s }
	arxiv := []papersearch.Paper{
		{ID: "arxiv:2401.00001", Title: "Sparse Routing for Mixtures of Experts", Abstract: "We route tokens sparsely (preprint).",
			Authors: []string{"Ada Lovelace", "Alan Turing"}, Venue: "arXiv", Year: 2024, URL: "https://arxiv.org/abs/2401.00001",
			Tags: []string{"arxiv"}, Sources: []papersearch.Source{arx("2401.00001")}},
		{ID: "arxiv:2401.00002", Title: "An Unrelated Study of Graph Kernels", Abstract: "Graph kernels.",
			Authors: []string{"Grace Hopper"}, Venue: "arXiv", Year: 2024, Tags: []string{"arxiv"}, Sources: []papersearch.Source{arx("2401.00002")}},
		{ID: "arxiv:2401.00003", Title: "Preprint Title of a Journal Paper", Abstract: "Journal work, preprint.",
			Authors: []string{"Kurt Gödel"}, Venue: "arXiv", Year: 2023, Tags: []string{"arxiv"},
			Sources: []papersearch.Source{arx("2401.00003"), doi("10.1/b")}},
	}
	conference := []papersearch.Paper{
		// The same work as arXiv 2401.00001: title and first author's
		// surname, folded, match.
		{ID: "openreview:abc", Title: "Sparse routing for mixtures of experts.", Abstract: "We route tokens sparsely.",
			Authors: []string{"Lovelace, Ada", "Turing, Alan"}, Venue: "NeurIPS", Year: 2025,
			URL: "https://openreview.net/forum?id=abc", Sources: []papersearch.Source{{ID: "openreview:abc", URL: "https://openreview.net/forum?id=abc"}}},
		// The journal version of 2401.00003, by DOI, under another title.
		{ID: "doi:10.1/b", Title: "Published Title", Abstract: "Journal work.", Authors: []string{"K. Gödel"},
			Venue: "J. Logic", Year: 2025, Sources: []papersearch.Source{doi("10.1/b")}},
		// Two records of one new work in the same batch.
		{ID: "bibtex:new", Title: "A Brand New Work on Things", Abstract: "New.", Authors: []string{"Emmy Noether"}},
		{ID: "csl:new", Title: "A brand new work on things", Abstract: "New, again.", Authors: []string{"Noether, E."}},
	}
	if _, err := catalog.New(eng, catalog.Options{}).Import(ctx, &sliceSource{papers: arxiv}, catalog.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	sum, err := catalog.New(eng, catalog.Options{}).Import(ctx, &sliceSource{papers: conference}, catalog.ImportOptions{Tags: []string{"neurips-2025"}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Merged != 3 || sum.New != 1 || sum.Updated != 2 {
		t.Errorf("summary %+v; want 3 merged, 1 new, 2 updated", sum)
	}
	if n, _ := store.Count(ctx); n != 4 {
		t.Errorf("%d papers stored, want 4 works", n)
	}
	got, err := eng.Get(ctx, "arxiv:2401.00001")
	if err != nil {
		t.Fatal(err)
	}
	want := papersearch.Paper{ID: "arxiv:2401.00001", Title: "Sparse routing for mixtures of experts.",
		Abstract: "We route tokens sparsely.", Authors: []string{"Lovelace, Ada", "Turing, Alan"}, Venue: "NeurIPS", Year: 2025,
		URL: "https://openreview.net/forum?id=abc", Tags: []string{"arxiv", "neurips-2025"},
		Sources: []papersearch.Source{arx("2401.00001"), {ID: "openreview:abc", URL: "https://openreview.net/forum?id=abc"}}}
	if time.Since(got.Added) > time.Minute {
		t.Errorf("merged paper added %v, want about now", got.Added)
	}
	want.Added = got.Added
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged paper\n%+v\nwant\n%+v", got, want)
	}
	for id, work := range map[string]string{"openreview:abc": "arxiv:2401.00001", "doi:10.1/b": "arxiv:2401.00003", "csl:new": "bibtex:new"} {
		if p, err := eng.Get(ctx, id); err != nil || p.ID != work {
			t.Errorf("Get(%s) = %s, %v; want %s", id, p.ID, err, work)
		}
	}
	if p, _ := eng.Get(ctx, "arxiv:2401.00003"); p.Venue != "J. Logic" || p.Year != 2025 || p.Title != "Published Title" {
		t.Errorf("the journal version's fields were not preferred: %+v", p)
	}
	res, err := eng.Similar(ctx, search.SimilarQuery{ID: "openreview:abc", Mode: search.Lexical, Limit: 10})
	if err != nil {
		t.Fatalf("similar by a source id: %v", err)
	}
	for _, h := range res.Hits {
		if h.ID == "arxiv:2401.00001" {
			t.Errorf("similar to openreview:abc returned its own work: %v", res.Hits)
		}
	}

	res, err = eng.Search(ctx, search.Query{Like: []string{"openreview:abc"}, Mode: search.Dense, Limit: 10})
	if err != nil {
		t.Fatalf("search like a source id: %v", err)
	}
	for _, h := range res.Hits {
		if h.ID == "arxiv:2401.00001" {
			t.Errorf("search like openreview:abc returned the liked work: %v", res.Hits)
		}
	}

	// Everything again, in either order: nothing changes.
	before, embedded := contents(t, store), len(emb.Texts())
	for _, again := range []struct {
		papers []papersearch.Paper
		tags   []string
	}{{conference, []string{"neurips-2025"}}, {arxiv, nil}, {conference, []string{"neurips-2025"}}} {
		if _, err := catalog.New(eng, catalog.Options{}).Import(ctx, &sliceSource{papers: again.papers}, catalog.ImportOptions{Tags: again.tags}); err != nil {
			t.Fatal(err)
		}
	}
	if after := contents(t, store); after != before {
		t.Errorf("importing again changed the store:\n%s\n---\n%s", after, before)
	}
	if p, _ := eng.Get(ctx, "arxiv:2401.00001"); p.Venue != "NeurIPS" {
		t.Errorf("the preprint imported again displaced the published version: %+v", p)
	}
	if d := len(emb.Texts()) - embedded; d != 0 {
		t.Errorf("importing again embedded %d texts", d)
	}

	// Two stored papers that one record shows to be one work are merged,
	// and the later one removed.
	if _, err := catalog.New(eng, catalog.Options{}).Ingest(ctx, []papersearch.Paper{
		{ID: "arxiv:9", Title: "T", Abstract: "A."}, {ID: "doi:10.2/q", Title: "Q", Abstract: "B.", Venue: "ICML", Year: 2020}}, nil); err != nil {
		t.Fatal(err)
	}
	sum, err = catalog.New(eng, catalog.Options{}).Import(ctx, &sliceSource{papers: []papersearch.Paper{{ID: "doi:10.2/q", Title: "Q", Abstract: "B.",
		Sources: []papersearch.Source{arx("9"), doi("10.2/q")}}}}, catalog.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Get(ctx, "doi:10.2/q"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the absorbed paper is still stored: %v", err)
	}
	if p, err := eng.Get(ctx, "doi:10.2/q"); err != nil || p.ID != "arxiv:9" || p.Venue != "ICML" || len(p.Sources) != 2 {
		t.Errorf("merged work %+v, %v", p, err)
	}
}

// budgetEmbedder embeds with hash vectors until budget texts are done,
// then fails.
type budgetEmbedder struct {
	hashvec.Embedder
	mu     sync.Mutex
	budget int
}

func (b *budgetEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.budget -= len(texts); b.budget < 0 {
		return nil, errors.New("the embedding endpoint is down")
	}
	return b.Embedder.Embed(ctx, texts)
}

// TestFailedImportCountsWhatItStored: an import whose embedder fails in
// its second batch reports the papers of the first as stored, exactly
// the ones in the store (it counted the failed batch's plan).
func TestFailedImportCountsWhatItStored(t *testing.T) {
	ctx := context.Background()
	emb := &budgetEmbedder{Embedder: hashvec.Embedder{Model: storetest.Model}, budget: 4 * 2}
	eng, store := searchtest.Engine(t, emb, search.Options{})
	var lib strings.Builder
	for i := range 10 { // one sentence each: two texts a paper
		fmt.Fprintf(&lib, `{"id":"p%d","title":"Paper %d","abstract":"Abstract number %d."}`+"\n", i, i, i)
	}
	src, err := seeds.NewReader(strings.NewReader(lib.String()), seeds.JSONL)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := catalog.New(eng, catalog.Options{}).Import(ctx, src, catalog.ImportOptions{Batch: 4})
	if err == nil {
		t.Fatal("the import did not fail")
	}
	n, _ := store.Count(ctx)
	if sum.New != 4 || n != 4 {
		t.Errorf("the failed import says %d new, the store holds %d; want 4 and 4", sum.New, n)
	}
}

// TestAddIsOneWayIn: a preprint and its published version end as one
// paper whichever way each came in (Add with or without Replace, as POST
// /v1/papers and imports call it), the ids say where each paper went, and
// with Replace a paper whose id is stored replaces it whole (its tags
// too) while a version under another id still merges.
func TestAddIsOneWayIn(t *testing.T) {
	ctx := context.Background()
	arx := func(id string) papersearch.Source { s, _ := seeds.Arxiv(id); return s }
	doi := func(d string) papersearch.Source { s, _ := seeds.DOI(d); return s }
	preprint := papersearch.Paper{ID: "arxiv:2402.00001", Title: "Learning to Route Tokens", Abstract: "We route tokens (preprint).",
		Authors: []string{"Ada Lovelace"}, Venue: "arXiv", Year: 2024, Tags: []string{"reading"}, Sources: []papersearch.Source{arx("2402.00001")}}
	published := papersearch.Paper{ID: "doi:10.5/route", Title: "Learning to route tokens", Abstract: "We route tokens.",
		Authors: []string{"Lovelace, Ada"}, Venue: "ICML", Year: 2025, Sources: []papersearch.Source{doi("10.5/route")}}
	ways := map[string]func(eng *search.Engine, p papersearch.Paper) (string, error){
		"post": func(eng *search.Engine, p papersearch.Paper) (string, error) {
			sum, err := catalog.New(eng, catalog.Options{}).Add(ctx, []papersearch.Paper{p}, catalog.AddOptions{Replace: true})
			if err != nil || len(sum.IDs) != 1 {
				return "", fmt.Errorf("%+v, %w", sum, err)
			}
			return sum.IDs[0], nil
		},
		"import": func(eng *search.Engine, p papersearch.Paper) (string, error) {
			_, err := catalog.New(eng, catalog.Options{}).Import(ctx, catalog.Papers([]papersearch.Paper{p}), catalog.ImportOptions{})
			return "", err
		},
	}
	for first, add1 := range ways {
		for second, add2 := range ways {
			t.Run(first+" then "+second, func(t *testing.T) {
				eng, store, _ := importEngine(t)
				if _, err := add1(eng, preprint); err != nil {
					t.Fatal(err)
				}
				id, err := add2(eng, published)
				if err != nil {
					t.Fatal(err)
				}
				if second == "post" && id != preprint.ID {
					t.Errorf("the published version is stored as %q, want the work's id %q", id, preprint.ID)
				}
				if n, _ := store.Count(ctx); n != 1 {
					t.Errorf("%d papers stored, want one work", n)
				}
				p, err := eng.Get(ctx, published.ID)
				if err != nil || p.ID != preprint.ID || p.Venue != "ICML" || len(p.Sources) != 2 || !slices.Equal(p.Tags, []string{"reading"}) {
					t.Errorf("the work: %+v, %v", p, err)
				}
			})
		}
	}

	t.Run("replace", func(t *testing.T) {
		eng, store, _ := importEngine(t)
		if _, err := catalog.New(eng, catalog.Options{}).Add(ctx, []papersearch.Paper{preprint, published}, catalog.AddOptions{}); err != nil {
			t.Fatal(err)
		}
		// The work's id again, without the tag and with another DOI: it
		// replaces the work whole.
		again := preprint
		again.Tags, again.Venue = nil, ""
		again.Sources = []papersearch.Source{arx("2402.00001"), doi("10.5/other")}
		sum, err := catalog.New(eng, catalog.Options{}).Add(ctx, []papersearch.Paper{again, again}, catalog.AddOptions{Replace: true})
		if err != nil || sum.Duplicates != 1 || sum.Updated != 1 || !slices.Equal(sum.IDs, []string{preprint.ID, preprint.ID}) {
			t.Fatalf("replace: %+v, %v", sum, err)
		}
		p, err := eng.Get(ctx, preprint.ID)
		if err != nil || len(p.Tags) != 0 || p.Venue != "" || len(p.Sources) != 2 || p.Sources[1].ID != "doi:10.5/other" {
			t.Errorf("replaced paper %+v, %v; want it as sent", p, err)
		}
		// A paper of the DOI it no longer has is a work of its own.
		sum, err = catalog.New(eng, catalog.Options{}).Add(ctx, []papersearch.Paper{{ID: "doi:10.5/route", Title: "Other", Abstract: "Other.",
			Sources: []papersearch.Source{doi("10.5/route")}}}, catalog.AddOptions{Replace: true})
		if err != nil || sum.New != 1 || sum.IDs[0] != "doi:10.5/route" {
			t.Errorf("a paper of the dropped DOI: %+v, %v; want it new, under its own id", sum, err)
		}
		if n, _ := store.Count(ctx); n != 2 {
			t.Errorf("%d papers stored, want 2", n)
		}
	})
}

// TestSimilarBySourceIDPages: similar asked by an id a paper is known by
// beside its own (a source of its work) pages as it does by the work's
// id: the next page follows from the first page's cursor, whole paper and
// by aspect.
func TestSimilarBySourceIDPages(t *testing.T) {
	ctx := context.Background()
	eng, _, _ := importEngine(t)
	arx := func(id string) papersearch.Source { s, _ := seeds.Arxiv(id); return s }
	papers := importPapers(12)
	papers[0].Sources = []papersearch.Source{arx("2404.00007")}
	papers[0].Abstract = "Routing tokens to experts. We balance the load. It scales."
	if _, err := catalog.New(eng, catalog.Options{}).Import(ctx, catalog.Papers(papers), catalog.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, aspect := range []search.Aspect{search.WholePaper, search.MethodAspect} {
		for _, id := range []string{papers[0].ID, "arxiv:2404.00007"} {
			first, err := eng.Similar(ctx, search.SimilarQuery{ID: id, Aspect: aspect, Mode: search.Dense, Limit: 3})
			if err != nil || first.NextCursor == "" {
				t.Fatalf("%s %q: first page %+v, %v", id, aspect, first.NextCursor, err)
			}
			next, err := eng.Similar(ctx, search.SimilarQuery{ID: id, Aspect: aspect, Mode: search.Dense, Limit: 3, Cursor: first.NextCursor})
			if err != nil || len(next.Hits) == 0 || next.Hits[0].Rank != 4 {
				t.Errorf("%s %q: the next page: %+v, %v", id, aspect, next.Hits, err)
			}
		}
	}
}

// TestImportProgressFollowsEmbedding: an import reports progress as its
// papers are embedded, not only when a batch is stored, counting records
// done (rejected, stored, or embedded in the batch in hand) up to every
// record read.
func TestImportProgressFollowsEmbedding(t *testing.T) {
	eng, _, _ := importEngine(t)
	papers := importPapers(40)
	var reports []catalog.ImportProgress
	sum, err := catalog.New(eng, catalog.Options{}).Import(context.Background(), &sliceSource{papers: papers, bad: map[int]bool{5: true}},
		catalog.ImportOptions{Batch: 20, Progress: func(p catalog.ImportProgress) { reports = append(reports, p) }})
	if err != nil {
		t.Fatal(err)
	}
	midBatch := 0
	for i, p := range reports {
		if i > 0 && (p.Done < reports[i-1].Done || p.Embedded < reports[i-1].Embedded) {
			t.Errorf("report %d went back: %+v after %+v", i, p, reports[i-1])
		}
		if p.Done > p.Read || p.Stored > p.Done {
			t.Errorf("report %d: %+v", i, p)
		}
		if p.Done > p.Stored+p.Rejected {
			midBatch++
		}
	}
	last := reports[len(reports)-1]
	if last.Done != 40 || last.Embedded != 39 || last.Stored != 39 || sum.Embedded != 39 {
		t.Errorf("last report %+v, summary %+v", last, sum)
	}
	// The engine embeds 8 papers at a time: two batches of 20 make six
	// reports before their papers are stored.
	if midBatch < 4 {
		t.Errorf("%d of %d reports came while a batch was embedded; want progress as papers are embedded: %+v", midBatch, len(reports), reports)
	}
}
