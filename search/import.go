package search

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
)

// A Source yields papers one at a time, as the readers of seeds and its
// subpackages do: Next returns io.EOF after the last, and a
// *seeds.LineError for a record it could not make a paper of (a record
// without an abstract among them), after which reading goes on. Any other
// error stops the import.
type Source interface {
	Next() (papersearch.Paper, error)
}

// ImportOptions shape an import.
type ImportOptions struct {
	// Tags are added to every paper imported, beside the tags it already
	// holds in the store and those the source gives it.
	Tags []string
	// Batch is how many papers are read before they are ingested together
	// (default ImportBatch); an import never holds more of its source.
	Batch int
	// Progress, if set, is called after each stored batch.
	Progress func(ImportProgress)
}

// ImportBatch is the default number of papers an import reads, merges and
// ingests at a time.
const ImportBatch = 256

// MaxReportedRejections bounds the rejected records an ImportSummary lists;
// it counts them all.
const MaxReportedRejections = 1000

// ImportProgress reports how far an import has come.
type ImportProgress struct {
	Read, Rejected int // records read from the source so far, and rejected
	Stored         int // papers ingested so far (new, updated or unchanged)
	Elapsed        time.Duration
}

// ImportSummary says what an import did.
type ImportSummary struct {
	papersearch.IngestSummary
	// Read counts the source's records; Rejected those that made no paper
	// (listed in Rejections, up to MaxReportedRejections, with NoAbstract
	// counting those rejected for having no abstract).
	Read, Rejected, NoAbstract int
	Rejections                 []*seeds.LineError
}

// Import reads src to its end and ingests its papers batch by batch
// (idempotently by id, as Ingest), each with opts.Tags added to the tags it
// holds already, so a paper imported into a second collection keeps the
// first. A stopped import keeps every batch it finished; running it again
// embeds nothing already stored and ends with the same store.
func (e *Engine) Import(ctx context.Context, src Source, opts ImportOptions) (ImportSummary, error) {
	start := time.Now()
	if opts.Batch <= 0 {
		opts.Batch = ImportBatch
	}
	tags, ok := papersearch.CleanTags(opts.Tags)
	if !ok {
		return ImportSummary{}, fmt.Errorf("import: %w", papersearch.ErrBadTag)
	}
	var sum ImportSummary
	batch := make([]papersearch.Paper, 0, opts.Batch)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := e.withStoredTags(ctx, batch, tags); err != nil {
			return err
		}
		s, err := e.Ingest(ctx, batch, nil)
		sum.IngestSummary.Add(s)
		if err != nil {
			return err
		}
		batch = batch[:0]
		if opts.Progress != nil {
			opts.Progress(ImportProgress{Read: sum.Read, Rejected: sum.Rejected,
				Stored: sum.New + sum.Updated + sum.Unchanged, Elapsed: time.Since(start)})
		}
		return nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		p, err := src.Next()
		var le *seeds.LineError
		switch {
		case errors.Is(err, io.EOF):
			err := flush()
			sum.Took = time.Since(start)
			return sum, err
		case errors.As(err, &le):
			sum.Read++
			sum.Rejected++
			if errors.Is(err, papersearch.ErrNoAbstract) {
				sum.NoAbstract++
			}
			if len(sum.Rejections) < MaxReportedRejections {
				sum.Rejections = append(sum.Rejections, le)
			}
			continue
		case err != nil:
			return sum, fmt.Errorf("import: read record %d: %w", sum.Read+1, err)
		}
		sum.Read++
		batch = append(batch, p)
		if len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return sum, err
			}
		}
	}
}

// withStoredTags gives each paper of batch the tags it holds in the store,
// its own and extra, merged; a merge beyond papersearch.MaxTags is an
// error naming the paper.
func (e *Engine) withStoredTags(ctx context.Context, batch []papersearch.Paper, extra []string) error {
	ids := make([]string, len(batch))
	for i, p := range batch {
		ids[i] = p.ID
	}
	stored, err := e.store.Lookup(ctx, ids)
	if err != nil {
		return fmt.Errorf("import: read stored tags: %w", err)
	}
	for i := range batch {
		p := &batch[i]
		all := append(append(append([]string(nil), stored[p.ID].Tags...), p.Tags...), extra...)
		tags, ok := papersearch.CleanTags(uniq(all))
		if !ok {
			return fmt.Errorf("import: paper %s: %w", p.ID, papersearch.ErrBadTag)
		}
		p.Tags = tags
	}
	return nil
}

// uniq drops repeated strings, keeping the first of each.
func uniq(s []string) []string {
	seen := make(map[string]bool, len(s))
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
