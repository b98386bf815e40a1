package catalog

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
// error stops the import. A paper it yields that papersearch.Complete
// refuses is rejected as record N of the source (a LineError whose Line is
// N).
type Source interface {
	Next() (papersearch.Paper, error)
}

// A Checkpointer is a Source an import can resume without reading again
// what it stored: Import calls Checkpoint after each batch it stored, when
// every record handed out so far is stored, with done false, and once
// more with done true after the last batch of a source read to its end.
type Checkpointer interface {
	Checkpoint(ctx context.Context, done bool) error
}

// ImportOptions shape an import.
type ImportOptions struct {
	// Tags are added to every paper imported, beside the tags it already
	// holds in the store and those the source gives it.
	Tags []string
	// Batch is how many papers are read before they are ingested together
	// (default ImportBatch); an import never holds more of its source.
	Batch int
	// Progress, if set, is called as papers are embedded (every few
	// papers) and after each stored batch.
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
	New            int // of which were not stored before
	// Embedded counts the papers embedded so far, those of the batch in
	// hand included.
	Embedded int
	// Done counts the records the import is through with: rejected,
	// stored, or embedded in the batch in hand (a share of its records as
	// large as the share of its papers to embed that are done).
	Done    int
	Elapsed time.Duration
}

// Papers is a Source of papers already in memory.
func Papers(papers []papersearch.Paper) Source { return &paperSlice{papers: papers} }

type paperSlice struct{ papers []papersearch.Paper }

func (s *paperSlice) Next() (papersearch.Paper, error) {
	if len(s.papers) == 0 {
		return papersearch.Paper{}, io.EOF
	}
	p := s.papers[0]
	s.papers = s.papers[1:]
	return p, nil
}

// ImportSummary says what an import did.
type ImportSummary struct {
	papersearch.IngestSummary
	// Read counts the source's records; Rejected those that made no paper
	// (listed in Rejections, up to MaxReportedRejections, with NoAbstract
	// counting those rejected for having no abstract).
	Read, Rejected, NoAbstract int
	Rejections                 []*seeds.LineError
	// Merged counts the versions of a work (an arXiv preprint, the
	// conference paper, the same DOI from two sources) that joined a paper
	// under another id; see papersearch.Merge.
	Merged int
}

// Import reads src to its end and ingests its papers batch by batch
// (idempotently by id, as Ingest), each with opts.Tags added to the tags it
// holds already, so a paper imported into a second collection keeps the
// first. Versions of one work (the same DOI or arXiv id, or the same
// title and first author's surname) become one paper holding every
// source, whichever source brought them. A stopped import keeps every
// batch it finished; running it again embeds nothing already stored and
// ends with the same store. An import is background work (see
// embedding.Models.Background): it gives way to the engine's queries.
func (c *Catalog) Import(ctx context.Context, src Source, opts ImportOptions) (sum ImportSummary, err error) {
	ctx = c.embedding.Background(ctx)
	start := time.Now()
	if opts.Batch <= 0 {
		opts.Batch = ImportBatch
	}
	tags, ok := papersearch.CleanTags(opts.Tags)
	if !ok {
		return ImportSummary{}, fmt.Errorf("import: %w", papersearch.ErrBadTag)
	}
	defer func() { sum.Took = time.Since(start) }() // an import that fails or is cancelled took time too
	batch := make([]papersearch.Paper, 0, opts.Batch)
	report := func(embedded, done int) {
		if opts.Progress != nil {
			opts.Progress(ImportProgress{Read: sum.Read, Rejected: sum.Rejected,
				Stored: sum.New + sum.Updated + sum.Unchanged, New: sum.New,
				Embedded: sum.Embedded + embedded, Done: sum.Rejected + done, Elapsed: time.Since(start)})
		}
	}
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		// Records before this batch, rejected ones aside.
		before := sum.Read - sum.Rejected - len(batch)
		embedding := func(embedded, done, total int) {
			report(embedded, before+len(batch)*done/total)
		}
		// Each batch is stored whole or not at all, so the summary counts
		// what was committed.
		s, err := c.add(ctx, batch, tags, AddOptions{embedding: embedding})
		sum.IngestSummary.Add(s.IngestSummary)
		sum.Merged += s.Merged
		if err != nil {
			return err
		}
		batch = batch[:0]
		if err := checkpoint(ctx, src, false); err != nil {
			return err
		}
		report(0, sum.Read-sum.Rejected)
		return nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		p, err := src.Next()
		if err == nil {
			// A source's readers check their records as they make papers
			// of them; one that does not (Papers) is checked here, so a
			// paper that is not valid is a rejected record (its Line the
			// record's number), not a failed batch.
			if p, err = checked(p); err != nil {
				err = &seeds.LineError{Line: sum.Read + 1, Err: err}
			}
		}
		var le *seeds.LineError
		switch {
		case errors.Is(err, io.EOF):
			err := flush()
			if err == nil {
				err = checkpoint(ctx, src, true)
			}
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

// checkpoint tells src, if it keeps checkpoints, that what it handed out
// is stored.
func checkpoint(ctx context.Context, src Source, done bool) error {
	if c, ok := src.(Checkpointer); ok {
		if err := c.Checkpoint(ctx, done); err != nil {
			return fmt.Errorf("import: checkpoint: %w", err)
		}
	}
	return nil
}
