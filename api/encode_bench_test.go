package api

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search"
)

// BenchmarkEncodeSearchResponse encodes a page of ten results with
// abstracts, as every search and similar response does.
func BenchmarkEncodeSearchResponse(b *testing.B) {
	res := search.Results{Index: papersearch.IndexInfo{Store: "embedded", Model: "all-MiniLM-L6-v2", Dim: 384, Papers: 29100}}
	for i := range 10 {
		res.Hits = append(res.Hits, papersearch.Hit{ID: fmt.Sprint("p", i), Rank: i + 1, Score: 0.5,
			Paper: papersearch.Paper{ID: fmt.Sprint("p", i), Title: "A title of a paper", Abstract: strings.Repeat("An abstract sentence. ", 60),
				Authors: []string{"Ada Lovelace", "Alan Turing"}, Venue: "NeurIPS", Year: 2026}})
	}
	for b.Loop() {
		json.NewEncoder(io.Discard).Encode(NewSearchResponse(res))
	}
}
