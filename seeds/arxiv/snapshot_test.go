package arxiv

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
)

func readAll(t *testing.T, r *SnapshotReader) ([]papersearch.Paper, []*seeds.LineError) {
	t.Helper()
	papers, rejected, err := seeds.Collect(r)
	if err != nil {
		t.Fatal(err)
	}
	return papers, rejected
}

func TestSnapshot(t *testing.T) {
	f, err := os.Open("testdata/snapshot.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := NewSnapshotReader(f, "cs.")
	papers, rejected := readAll(t, r)
	if len(papers) != 2 || r.Skipped != 1 {
		t.Fatalf("papers %+v, skipped %d; want 2 and the hep-ph one skipped", papers, r.Skipped)
	}
	p := papers[0]
	if p.ID != "arxiv:2401.01234" || p.Title != `Sparse Mixtures of Experts for $\ell_1$ Routing` || p.Year != 2024 || p.Date != "2024-01-02" ||
		p.Venue != "arXiv" || p.URL != "https://arxiv.org/abs/2401.01234" ||
		strings.Join(p.Authors, "|") != "Ada Lovelace|Alan Turing|John Doe Jr" {
		t.Errorf("paper 0: %+v", p)
	}
	if p := papers[1]; p.ID != "arxiv:cs/9901001" || p.Year != 1999 || p.Date != "" || strings.Join(p.Authors, "|") != "Kurt Gödel" {
		t.Errorf("paper 1: %+v", p)
	}
	if len(rejected) != 2 || rejected[0].Line != 4 || !errors.Is(rejected[1], papersearch.ErrNoAbstract) || rejected[1].Line != 5 {
		t.Errorf("rejected %v", rejected)
	}

	f.Seek(0, io.SeekStart)
	all, _ := readAll(t, NewSnapshotReader(f))
	if len(all) != 3 || all[0].ID != "arxiv:0704.0001" || all[0].Venue != "Phys.Rev.D76:013009,2007" || all[0].Year != 2007 ||
		all[0].Abstract != "A fully differential calculation in perturbative quantum chromodynamics is presented." ||
		all[0].Title != "Calculation of prompt diphoton production cross sections at Tevatron and LHC energies" {
		t.Errorf("without a category filter: %+v", all)
	}
	if s := all[0].Sources; len(s) != 2 || s[0].ID != "arxiv:0704.0001" || s[1].ID != "doi:10.1103/physrevd.76.013009" ||
		s[1].URL != "https://doi.org/10.1103/PhysRevD.76.013009" {
		t.Errorf("sources of the record with a DOI: %+v", s)
	}
}

// generated writes n snapshot lines, a tenth of them in cs.LG, each with a
// 1 kB abstract, as the real snapshot's lines are.
func generated(n int) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		abstract := strings.Repeat("word ", 200)
		for i := range n {
			cat := "hep-ph"
			if i%10 == 0 {
				cat = "cs.LG stat.ML"
			}
			_, err := fmt.Fprintf(pw, `{"id":"%04d.%05d","submitter":"S","authors":"A. Author, B. Author","title":"Paper %d","comments":null,"journal-ref":null,"doi":null,"categories":"%s","abstract":"%s","versions":[{"version":"v1","created":"Mon, 2 Apr 2007 19:18:42 GMT"}],"update_date":"2008-11-13","authors_parsed":[["Author","A.",""],["Author","B.",""]]}`+"\n",
				701+i/100000%1000, i%100000, i, cat, abstract)
			if err != nil {
				return
			}
		}
		pw.Close()
	}()
	return pr
}

// BenchmarkSnapshotMillion streams a generated 1,000,000-line snapshot
// (about 1.2 GB) through the reader and the cs. filter, reporting lines/s
// and the heap in use at the end (a bounded-memory reader keeps it flat).
// Run: go test -run '^$' -bench SnapshotMillion -benchtime 1x ./seeds/arxiv
func BenchmarkSnapshotMillion(b *testing.B) {
	for b.Loop() {
		r := NewSnapshotReader(generated(1_000_000), "cs.")
		kept := 0
		for {
			_, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			kept++
		}
		if kept != 100_000 {
			b.Fatalf("kept %d, want 100000", kept)
		}
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		b.ReportMetric(1_000_000/b.Elapsed().Seconds(), "lines/s")
		b.ReportMetric(float64(m.HeapSys)/(1<<20), "heap-sys-MiB")
	}
}

// TestSnapshotRefusesOtherIDs: a JSON line whose id is no arXiv
// identifier (another corpus's JSON lines given as a snapshot) is a
// rejected record saying so, not a paper stored as arxiv:<its id>.
func TestSnapshotRefusesOtherIDs(t *testing.T) {
	lines := `{"id": "many0", "title": "T", "abstract": "An abstract."}
{"id": "2401.01234v2", "title": "T", "abstract": "An abstract."}
{"id": "math.AG/0601001", "title": "T", "abstract": "An abstract."}
{"id": "2401.01234/../x", "title": "T", "abstract": "An abstract."}
`
	papers, rejected := readAll(t, NewSnapshotReader(strings.NewReader(lines)))
	if len(papers) != 2 || papers[0].ID != "arxiv:2401.01234v2" || papers[1].ID != "arxiv:math.AG/0601001" {
		t.Errorf("papers %+v", papers)
	}
	if len(rejected) != 2 || rejected[0].Line != 1 || rejected[1].Line != 4 || !errors.Is(rejected[0], errNotArxiv) ||
		!strings.Contains(rejected[0].Error(), "is this arXiv's metadata snapshot?") {
		t.Errorf("rejected %v", rejected)
	}
}
