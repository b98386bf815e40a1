package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/roles"
	"github.com/papersearch/papersearch/search/storage"
	"github.com/papersearch/papersearch/search/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storage.Store {
		s, err := Open(context.Background(), filepath.Join(t.TempDir(), "papers.db"), storetest.Model)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "papers.db")
	s, err := Open(ctx, path, storetest.Model)
	if err != nil {
		t.Fatal(err)
	}
	docs := []storage.Document{storetest.Doc(1), storetest.Doc(2), storetest.Doc(3)}
	if err := s.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "p002"); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(ctx, path, storetest.Model)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, _ := s.Count(ctx); n != 2 {
		t.Fatalf("after reopen Count = %d, want 2", n)
	}
	got, _ := s.Nearest(ctx, docs[2].Vector, 1, papersearch.Filter{})
	if len(got) != 1 || got[0].ID != "p003" {
		t.Errorf("after reopen Nearest = %v", got)
	}

	other := embed.ModelInfo{Name: "other-model", Dim: 8}
	if _, err := Open(ctx, path, other); !errors.Is(err, storage.ErrModelMismatch) {
		t.Errorf("open with another model: err = %v, want storage.ErrModelMismatch", err)
	}
	wider := embed.ModelInfo{Name: storetest.Model.Name, Dim: 16}
	if _, err := Open(ctx, path, wider); !errors.Is(err, storage.ErrModelMismatch) {
		t.Errorf("open with another dimension: err = %v, want storage.ErrModelMismatch", err)
	}
}

// TestAnalysesTermsOnce: a store written before analysed terms were
// stored (their column empty) answers lexical queries after opening, from
// the text it analyses then, and keeps those terms for the next opening.
func TestAnalysesTermsOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "papers.db")
	s, err := Open(ctx, path, storetest.Model)
	if err != nil {
		t.Fatal(err)
	}
	d := storetest.Doc(1)
	d.Paper.Abstract = "Gradient clipping stabilises recurrent networks."
	if err := s.Upsert(ctx, []storage.Document{d, storetest.Doc(2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE papers SET terms = ''`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for round := range 2 {
		s, err = Open(ctx, path, storetest.Model)
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.Lexical(ctx, lexical.Analyze("clipping gradients"), 5, papersearch.Filter{})
		if err != nil || len(m.Candidates) != 1 || m.Candidates[0].ID != "p001" {
			t.Errorf("opening %d: lexical = %+v, %v; want p001 alone", round, m.Candidates, err)
		}
		var empty int
		s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM papers WHERE terms = ''`).Scan(&empty)
		if empty != 0 {
			t.Errorf("opening %d: %d papers still without terms", round, empty)
		}
		s.Close()
	}
}

// TestConcurrentWritesOfOneID writes one id from many goroutines at
// once, each with another abstract and vector, while readers run lexical
// and dense queries. Afterwards the in-memory index must hold what the file
// holds, before and after a reopen: a change is applied to memory in the
// order it was committed to disk.
func TestConcurrentWritesOfOneID(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "papers.db")
	s, err := Open(ctx, path, storetest.Model)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	if err := s.Upsert(ctx, []storage.Document{storetest.Doc(1), storetest.Doc(2)}); err != nil {
		t.Fatal(err)
	}
	variant := func(i int) storage.Document {
		// Each variant has a word of its own, so lexical search tells them apart.
		p := papersearch.Paper{ID: "same", Title: "Contested paper",
			Abstract: fmt.Sprintf("A contested abstract about %s.", variantWord(i))}
		fp := storage.FingerprintOf(p)
		return storage.Document{Paper: p, Vector: storetest.RandomUnit(uint64(1000+i), storetest.Model.Dim), TextHash: fp.TextHash, PaperHash: fp.PaperHash}
	}
	const writers, rounds = 8, 40
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for r := range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.Lexical(ctx, lexical.Analyze(variantWord(n%writers)+" contested"), 5, papersearch.Filter{}); err != nil {
					t.Error(err)
				}
				if _, err := s.Nearest(ctx, storetest.RandomUnit(uint64(r), storetest.Model.Dim), 3, papersearch.Filter{}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for round := range rounds {
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.Upsert(ctx, []storage.Document{variant(w)}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if !memoryMatchesDisk(t, s, variant, writers) {
			t.Fatalf("round %d: memory and disk disagree", round)
		}
	}
	close(stop)
	readers.Wait()
	before, _ := s.Get(ctx, "same")
	s.Close()
	if s, err = Open(ctx, path, storetest.Model); err != nil {
		t.Fatal(err)
	}
	if !memoryMatchesDisk(t, s, variant, writers) {
		t.Fatal("after reopen: memory and disk disagree")
	}
	if after, _ := s.Get(ctx, "same"); after.Paper.Abstract != before.Paper.Abstract {
		t.Errorf("reopened file holds %q, the running store held %q", after.Paper.Abstract, before.Paper.Abstract)
	}
	if n, _ := s.Count(ctx); n != 3 {
		t.Errorf("Count = %d, want 3", n)
	}
}

func variantWord(i int) string {
	return []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}[i]
}

// memoryMatchesDisk reports whether the in-memory vector and lexical terms
// of "same" are those of the version in the file.
func memoryMatchesDisk(t *testing.T, s *Store, variant func(int) storage.Document, writers int) bool {
	t.Helper()
	ctx := context.Background()
	disk, err := s.Get(ctx, "same")
	if err != nil {
		t.Fatal(err)
	}
	mem, ok := s.idx.Load().vector("same")
	if !ok || embed.Dot(mem, disk.Vector) < 0.9999 {
		t.Errorf("the in-memory vector of %q is not the stored one (%q)", "same", disk.Paper.Abstract)
		return false
	}
	ok = true
	for w := range writers {
		m, err := s.Lexical(ctx, lexical.Analyze(variantWord(w)), 5, papersearch.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		found := len(m.Candidates) == 1 && m.Candidates[0].ID == "same"
		if want := variant(w).Paper.Abstract == disk.Paper.Abstract; found != want {
			t.Errorf("lexical search for %q finds the paper: %v; the stored abstract is %q", variantWord(w), found, disk.Paper.Abstract)
			ok = false
		}
	}
	return ok
}

// TestUpgradesSchema: a store of schema version 2 (before tags) opens,
// gains the tags column and keeps its papers, less their sentence vectors.
func TestUpgradesSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "papers.db")
	s, err := Open(ctx, path, storetest.Model)
	if err != nil {
		t.Fatal(err)
	}
	first := storetest.Doc(1)
	first.Sentences = []storage.Sentence{{Role: roles.Method, Vector: storetest.RandomUnit(5, storetest.Model.Dim)}}
	if err := s.Upsert(ctx, []storage.Document{first}); err != nil {
		t.Fatal(err)
	}
	// Back to version 2: no tags, no sources, no work keys.
	execAll(t, s, `ALTER TABLE papers DROP COLUMN tags`, `ALTER TABLE papers DROP COLUMN sources`, `ALTER TABLE papers DROP COLUMN type`,
		`ALTER TABLE papers DROP COLUMN date`, `ALTER TABLE papers DROP COLUMN added`,
		`DROP TABLE work_keys`, `UPDATE meta SET value = '2' WHERE key = 'schema_version'`)
	s.Close()
	if s, err = Open(ctx, path, storetest.Model); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := storetest.Doc(2)
	d.Paper.Tags = []string{"upgraded"}
	if err := s.Upsert(ctx, []storage.Document{d}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Nearest(ctx, d.Vector, 5, papersearch.Filter{Tags: []string{"upgraded"}})
	if err != nil || len(got) != 1 || got[0].ID != d.Paper.ID {
		t.Errorf("after the upgrade, nearest within the tag = %v, %v", got, err)
	}
	if n, _ := s.Count(ctx); n != 2 {
		t.Errorf("count after the upgrade = %d, want 2", n)
	}
	if works, err := s.Works(ctx, []string{"p001"}); err != nil || len(works) != 1 {
		t.Errorf("after the upgrade, the work keys of the paper stored before = %v, %v", works, err)
	}
	// Version 5's sentence vectors are dropped, and the paper's hash
	// forgotten so that the next ingest embeds it again.
	if got, err := s.Sentences(ctx, []string{"p001"}); err != nil || got["p001"] != nil {
		t.Errorf("after the upgrade, the sentences of the paper stored before = %+v, %v", got, err)
	}
	if fps, err := s.Fingerprints(ctx, []string{"p001"}); err != nil || fps["p001"].PaperHash != "" || fps["p001"].TextHash != first.TextHash {
		t.Errorf("after the upgrade, the paper stored before has hashes %+v (%v), want its text hash and no paper hash", fps["p001"], err)
	}
	// Version 8 kept no added times: the papers count as added when the
	// store was upgraded.
	if got, err := s.Get(ctx, "p001"); err != nil || time.Since(got.Paper.Added) > time.Minute || time.Since(got.Paper.Added) < 0 {
		t.Errorf("after the upgrade, the paper stored before was added %v (%v), want about now", got.Paper.Added, err)
	}
	var v string
	s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&v)
	if v != strconv.Itoa(schemaVersion) {
		t.Errorf("schema version after the upgrade = %s", v)
	}
}

// TestSentencesKeptByAWriteWithout: the embedded store leaves a paper's
// sentences alone when a write brings none (its text did not change);
// the rest of their behaviour is the conformance suite's.
func TestSentencesKeptByAWriteWithout(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "p.db"), storetest.Model)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := storetest.Doc(1)
	d.Sentences = []storage.Sentence{{Role: roles.Result, Vector: storetest.RandomUnit(11, storetest.Model.Dim)}}
	if err := s.Upsert(ctx, []storage.Document{d}); err != nil {
		t.Fatal(err)
	}
	d.Paper.Venue, d.Sentences = "Elsewhere", nil
	if err := s.Upsert(ctx, []storage.Document{d}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Sentences(ctx, []string{"p001"})
	if err != nil || len(got["p001"]) != 1 || got["p001"][0].Role != roles.Result {
		t.Errorf("after a write without sentences: %+v, %v", got, err)
	}
}

// TestUpgradeFoldsAccents: a store of schema version 6 holds terms
// analysed without folding accents ("naïv"); opened by this version its
// terms are analysed again, so "naive bayes" and "naïve bayes" score the
// paper alike, and the author filter finds "Schölkopf" as "scholkopf".
func TestUpgradeFoldsAccents(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "papers.db")
	s, err := Open(ctx, path, storetest.Model)
	if err != nil {
		t.Fatal(err)
	}
	d := storetest.Doc(1)
	d.Paper.Title, d.Paper.Abstract, d.Paper.Authors = "Naïve Bayes revisited", "A naïve Bayes classifier for spam.", []string{"Bernhard Schölkopf"}
	other := storetest.Doc(2)
	other.Paper.Abstract = "Bayes nets for spam filtering with naive priors."
	if err := s.Upsert(ctx, []storage.Document{d, other}); err != nil {
		t.Fatal(err)
	}
	// Back to version 6, with the terms its analyser made.
	if _, err := s.db.ExecContext(ctx, `UPDATE papers SET terms = 'naïv bay revisit naïv bay classifi spam' WHERE id = 'p001'`); err != nil {
		t.Fatal(err)
	}
	execAll(t, s, `ALTER TABLE papers DROP COLUMN type`, `ALTER TABLE papers DROP COLUMN date`, `ALTER TABLE papers DROP COLUMN added`,
		`UPDATE meta SET value = '6' WHERE key = 'schema_version'`)
	s.Close()
	if s, err = Open(ctx, path, storetest.Model); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	plain, err := s.Lexical(ctx, lexical.Analyze("naive bayes"), 5, papersearch.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	accented, err := s.Lexical(ctx, lexical.Analyze("naïve bayes"), 5, papersearch.Filter{})
	if err != nil || len(plain.Candidates) == 0 || plain.Candidates[0].ID != "p001" ||
		fmt.Sprint(plain.Candidates) != fmt.Sprint(accented.Candidates) {
		t.Errorf("after the upgrade: naive bayes %v, naïve bayes %v (%v)", plain.Candidates, accented.Candidates, err)
	}
	for _, author := range []string{"scholkopf", "Schölkopf", "bernhard scho"} {
		got, err := s.Nearest(ctx, d.Vector, 5, papersearch.Filter{Author: author})
		if err != nil || len(got) != 1 || got[0].ID != "p001" {
			t.Errorf("author %q: %v, %v", author, got, err)
		}
	}
}

// TestSentencesOfManyPapers: the sentences of many papers, read by as many
// readers as there are cores, are each paper's own, as read one by one;
// a paper without any, or unknown, is absent.
func TestSentencesOfManyPapers(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "p.db"), storetest.Model)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var docs []storage.Document
	var ids []string
	for i := range 3 * sentencesPerReader {
		d := storetest.Doc(i)
		if i%7 != 0 { // every seventh paper has none
			d.Sentences = []storage.Sentence{{Role: roles.Method, Vector: storetest.RandomUnit(uint64(i), storetest.Model.Dim)},
				{Role: roles.Result, Vector: storetest.RandomUnit(uint64(1000+i), storetest.Model.Dim)}}
		}
		docs = append(docs, d)
		ids = append(ids, d.Paper.ID)
	}
	if err := s.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	all, err := s.Sentences(ctx, append(ids, "unknown"))
	if err != nil {
		t.Fatal(err)
	}
	if want := len(ids) - (len(ids)+6)/7; len(all) != want {
		t.Errorf("%d papers' sentences, want %d", len(all), want)
	}
	for _, id := range ids {
		one, err := s.Sentences(ctx, []string{id})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(all[id], one[id]) {
			t.Fatalf("paper %s: %v read with the others, %v alone", id, all[id], one[id])
		}
	}
}

// TestUpgradeFoldsWorkKeys: a store of schema version 10 keyed a work by
// its title and first author's surname with ø, ß and the like kept; opened
// by this version its keys are made again, so a version spelled in ASCII
// ("Jorgensen", "Strasse") is recognised as the stored paper's.
func TestUpgradeFoldsWorkKeys(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "papers.db")
	s, err := Open(ctx, path, storetest.Model)
	if err != nil {
		t.Fatal(err)
	}
	d := storetest.Doc(1)
	d.Paper.Title, d.Paper.Authors = "Spectral Methods for Straße Networks", []string{"Søren Jørgensen"}
	if err := s.Upsert(ctx, []storage.Document{d}); err != nil {
		t.Fatal(err)
	}
	ascii := papersearch.TitleKey(papersearch.Paper{Title: "Spectral methods for Strasse networks", Authors: []string{"Jorgensen, Soren"}})
	// Back to version 10: the key as its fold wrote it.
	execAll(t, s, `UPDATE work_keys SET key = 'title:spectral methods for straße networks/jørgensen' WHERE key LIKE 'title:%'`,
		`UPDATE meta SET value = '10' WHERE key = 'schema_version'`)
	if works, err := s.Works(ctx, []string{ascii}); err != nil || len(works) != 0 {
		t.Fatalf("before the upgrade, %s finds %v, %v", ascii, works, err)
	}
	s.Close()
	if s, err = Open(ctx, path, storetest.Model); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if works, err := s.Works(ctx, []string{ascii}); err != nil || len(works) != 1 || works["p001"].ID != "p001" {
		t.Errorf("after the upgrade, %s finds %v, %v; want p001", ascii, works, err)
	}
}

// TestUpgradeSentencesByRowid: a store of schema version 11 kept sentences
// in a WITHOUT ROWID table; opened by this version the same rows are in a
// table keyed by rowid.
func TestUpgradeSentencesByRowid(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "papers.db")
	s, err := Open(ctx, path, storetest.Model)
	if err != nil {
		t.Fatal(err)
	}
	var docs []storage.Document
	for i := range 3 {
		d := storetest.Doc(i + 1)
		d.Sentences = []storage.Sentence{{Role: roles.Background, Vector: storetest.RandomUnit(uint64(10*i+1), storetest.Model.Dim)},
			{Role: roles.Result, Vector: storetest.RandomUnit(uint64(10*i+2), storetest.Model.Dim)}}
		docs = append(docs, d)
	}
	if err := s.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	ids := []string{"p001", "p002", "p003"}
	want, err := s.Sentences(ctx, ids)
	if err != nil || len(want) != 3 {
		t.Fatalf("Sentences = %v, %v", want, err)
	}
	// Back to version 11: the same rows in a WITHOUT ROWID table.
	execAll(t, s, `CREATE TABLE old (id TEXT PRIMARY KEY, roles TEXT NOT NULL, vectors BLOB NOT NULL) WITHOUT ROWID`,
		`INSERT INTO old SELECT id, roles, vectors FROM sentences`, `DROP TABLE sentences`, `ALTER TABLE old RENAME TO sentences`,
		`UPDATE meta SET value = '11' WHERE key = 'schema_version'`)
	s.Close()
	if s, err = Open(ctx, path, storetest.Model); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var table string
	if err := s.db.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE name = 'sentences'`).Scan(&table); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.ToUpper(table), "WITHOUT ROWID") {
		t.Errorf("after the upgrade the table is %s", table)
	}
	got, err := s.Sentences(ctx, ids)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("after the upgrade Sentences = %v, %v; want %v", got, err, want)
	}
}

// execAll runs each statement against s's database, directly: a test
// takes a store back to an older schema so.
func execAll(t *testing.T, s *Store, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := s.db.ExecContext(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
}
