package bench

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/search/sqlite"
	"github.com/papersearch/papersearch/search/storage"
)

// shifted is a store whose dense answers leave out each query's best
// paper: what an index that misses rows would answer.
type shifted struct{ storage.Store }

func (s shifted) Nearest(ctx context.Context, v []float32, k int, f papersearch.Filter) ([]storage.Candidate, error) {
	c, err := s.Store.Nearest(ctx, v, k+1, f)
	if len(c) > 0 {
		c = c[1:]
	}
	return c, err
}

// TestDenseRecall: the embedded store's dense top 10 of papers' own
// vectors is the exact scan's (recall 1, each paper its own nearest); a
// store that leaves out each best answer is measured at 0.9, and papers
// not stored are not asked for.
func TestDenseRecall(t *testing.T) {
	ctx := context.Background()
	const dim, n = 32, 300
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "recall.db"), embed.ModelInfo{Name: "hash-32", Dim: dim})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var papers []papersearch.Paper
	var docs []storage.Document
	for i := range n {
		p := papersearch.Paper{ID: "p" + strconv.Itoa(i), Title: "paper " + strconv.Itoa(i), Abstract: "an abstract"}
		papers = append(papers, p)
		docs = append(docs, storage.Document{Paper: p, Vector: hashvec.Of(p.ID, dim)})
	}
	if err := store.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	papers = append(papers, papersearch.Paper{ID: "never-stored", Title: "gone", Abstract: "gone"})
	r, err := denseRecall(ctx, store, papers)
	if err != nil {
		t.Fatal(err)
	}
	// The fixed draw of 100 of the 301 holds the paper never stored.
	if r.Queries != recallQueries-1 || r.Recall10 != 1 || r.P50 <= 0 {
		t.Errorf("embedded store: %+v, want %d queries at recall 1", r, recallQueries-1)
	}
	if r, err = denseRecall(ctx, shifted{store}, papers); err != nil {
		t.Fatal(err)
	}
	if r.Recall10 != 0.9 {
		t.Errorf("a store missing each best answer: recall %.4f, want 0.9", r.Recall10)
	}
}
