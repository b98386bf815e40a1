package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/storage"
)

// echoEngine answers every call with a small fixed result, so fuzzing
// reaches past decoding without a model.
type echoEngine struct{}

func (echoEngine) RelevanceFloor(search.Results) (float32, bool) { return 0, false }

func (echoEngine) Search(ctx context.Context, q search.Query) (search.Results, error) {
	if err := search.ValidateFilter(q.Filter); err != nil {
		return search.Results{}, err
	}
	return search.Results{Hits: []papersearch.Hit{{ID: "a", Rank: 1, Paper: papersearch.Paper{ID: "a", Title: q.Text}}}}, nil
}
func (echoEngine) Similar(context.Context, search.SimilarQuery) (search.Results, error) {
	return search.Results{}, nil
}
func (echoEngine) Get(context.Context, string) (papersearch.Paper, error) {
	return papersearch.Paper{}, storage.ErrNotFound
}
func (echoEngine) Ping(context.Context) error { return nil }
func (echoEngine) Collections(context.Context) ([]papersearch.Collection, error) {
	return []papersearch.Collection{{Tag: "t", Papers: 1}}, nil
}
func (echoEngine) Recommend(context.Context, search.RecommendQuery) (search.Results, error) {
	return search.Results{}, nil
}
func (echoEngine) CollectionPapers(context.Context, string) ([]papersearch.Paper, error) {
	return nil, nil
}
func (echoEngine) Retag(context.Context, []string, []string, []string) ([]papersearch.Paper, error) {
	return nil, nil
}
func (echoEngine) Index(context.Context) (papersearch.IndexInfo, error) {
	return papersearch.IndexInfo{}, nil
}
func (echoEngine) Models() []embed.ModelInfo         { return []embed.ModelInfo{{Name: "m", Dim: 2}} }
func (echoEngine) Encoders() map[string]embed.Choice { return nil }
func (echoEngine) Embed(_ context.Context, _ string, texts []string) ([][]float32, int, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0}
	}
	return out, len(texts), nil
}

// Add checks papers as the catalog does (catalog.Check), storing nothing.
func (echoEngine) Add(_ context.Context, papers []papersearch.Paper, opts catalog.AddOptions) (catalog.AddSummary, error) {
	if _, err := catalog.Check(papers, opts); err != nil {
		return catalog.AddSummary{}, err
	}
	ids := make([]string, len(papers))
	for i, p := range papers {
		ids[i] = p.ID
	}
	return catalog.AddSummary{IngestSummary: papersearch.IngestSummary{New: len(papers)}, IDs: ids}, nil
}
func (echoEngine) Update(_ context.Context, p papersearch.Paper) (papersearch.Paper, error) {
	return p, nil
}
func (echoEngine) Delete(context.Context, string) error { return nil }
func (echoEngine) Import(context.Context, catalog.Source, catalog.ImportOptions) (catalog.ImportSummary, error) {
	return catalog.ImportSummary{}, nil
}

// FuzzRequests sends arbitrary bodies to every JSON endpoint: the answer is
// never a 5xx, and every error is a problem+json body.
func FuzzRequests(f *testing.F) {
	f.Add(`{"query":"graphs","limit":5,"filters":{"year_min":2020,"venues":["ICML"]},"mode":"hybrid","explain":true}`)
	f.Add(`{"query":"x","like":["a"],"cursor":"eyJ2IjoxfQ"}`)
	f.Add(`{"input":["a","b"],"model":"m","encoding_format":"base64"}`)
	f.Add(`{"papers":[{"id":"a","abstract":"b","year":"2020"}]}`)
	f.Add("{\"query\":\"\xff\"}")
	f.Add(`{"limit":1e400}`)
	f.Add(`{"query":"a","query":"b","filters":{"venues":["x",null],"year_min":2020.0}}`)
	f.Add(`{"papers":[{"id":null,"abstract":"a","url":"https://x.org/p","authors":["A",null]},null]}`)
	h := New(echoEngine{}, echoEngine{}, Options{OpenWrites: true})
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/v1/search", "/v1/embeddings", "/v1/papers"} {
			req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("%s %q: status %d: %s", path, body, rec.Code, rec.Body)
			}
			if rec.Code >= 400 {
				var p wire.Problem
				if rec.Header().Get("Content-Type") != "application/problem+json" || json.Unmarshal(rec.Body.Bytes(), &p) != nil || p.Status != rec.Code {
					t.Fatalf("%s %q: %d without a problem body: %s", path, body, rec.Code, rec.Body)
				}
			}
		}
	})
}
