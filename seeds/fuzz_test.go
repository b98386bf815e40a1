package seeds

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/papersearch/papersearch"
)

// FuzzReader reads arbitrary bytes as a corpus in both formats: it never
// panics, and every paper it returns is complete and valid.
func FuzzReader(f *testing.F) {
	f.Add([]byte("Header\n\nAn abstract.\n\nAnother one.\n"))
	f.Add([]byte(`{"id":"a","title":"T","abstract":"A","authors":["x"],"year":2020}` + "\n" + `{"_id":"b","text":"B","year":"1999"}`))
	f.Add([]byte("{\"id\":\"\xff\",\"abstract\":\"x\"}\n{broken\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []Format{0, Text, JSONL} {
			papers, rejected, err := ReadAll(bytes.NewReader(data), format)
			if err != nil {
				continue
			}
			for _, p := range papers {
				if !papersearch.ValidID(p.ID) || p.Abstract == "" || p.Title == "" || !utf8.ValidString(p.Abstract) || !utf8.ValidString(p.Title) {
					t.Fatalf("invalid paper accepted: %+v", p)
				}
			}
			for _, le := range rejected {
				if le.Line < 1 {
					t.Fatalf("rejection without a line number: %v", le)
				}
			}
		}
	})
}
