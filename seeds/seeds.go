package seeds

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"

	"github.com/papersearch/papersearch"
)

//go:embed neurips-2026-abstracts.txt
var neurips2026 []byte

// Name is the name of the shipped corpus, as logs and summaries show it.
const Name = "NeurIPS 2026 abstracts"

// NeurIPS2026 returns the shipped seed corpus, the NeurIPS 2026 abstracts,
// with the venue and year every one of them shares.
func NeurIPS2026() ([]papersearch.Paper, error) {
	papers, rejected, err := ReadAll(bytes.NewReader(neurips2026), Text)
	if err != nil {
		return nil, fmt.Errorf("read seed corpus: %w", err)
	}
	if len(rejected) > 0 {
		return nil, fmt.Errorf("seed corpus: %w", rejected[0])
	}
	for i := range papers {
		papers[i].Venue = "NeurIPS"
		papers[i].Year = 2026
		papers[i].Type = papersearch.TypeProceedingsArticle
	}
	return papers, nil
}

// ReadAll reads a whole corpus. It returns the valid papers, the records it
// rejected and, separately, an error that stopped reading altogether.
func ReadAll(r io.Reader, format Format) ([]papersearch.Paper, []*LineError, error) {
	rd, err := NewReader(r, format)
	if err != nil {
		return nil, nil, err
	}
	return Collect(rd)
}

// Collect reads src to its end: the valid papers, the records it rejected
// (each a *LineError) and, separately, an error that stopped reading.
func Collect(src interface {
	Next() (papersearch.Paper, error)
}) ([]papersearch.Paper, []*LineError, error) {
	var (
		papers   []papersearch.Paper
		rejected []*LineError
	)
	for {
		p, err := src.Next()
		var le *LineError
		switch {
		case err == nil:
			papers = append(papers, p)
		case errors.Is(err, io.EOF):
			return papers, rejected, nil
		case errors.As(err, &le):
			rejected = append(rejected, le)
		default:
			return papers, rejected, err
		}
	}
}
