package catalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/lexical"
	"github.com/papersearch/papersearch/search/storage"
)

// IngestBatch is how many papers are embedded and stored together: small
// enough that progress is reported (and kept) every few seconds with the
// local model, large enough to keep every core busy.
const IngestBatch = 8

// IngestProgress reports how far an ingest has come.
type IngestProgress struct {
	Done, Total int // papers to embed or store, done so far and in all
	Elapsed     time.Duration
}

// Ingest adds papers to the store by id exactly as given, without
// merging versions of a work: for corpora whose ids a measurement depends
// on (papersearch eval's judged documents, the benchmarks). Papers that
// users bring in go through Add (Import, POST /v1/papers). A paper stored
// unchanged is skipped, a changed one replaced, and only papers whose text
// changed are embedded. Work is stored batch by batch, so an interrupted
// ingest keeps what it finished and a rerun completes the rest. progress,
// if not nil, is called after each batch.
func (c *Catalog) Ingest(ctx context.Context, papers []papersearch.Paper, progress func(IngestProgress)) (papersearch.IngestSummary, error) {
	start := time.Now()
	work, sum, err := c.plan(ctx, papers)
	if err != nil {
		return sum, err
	}
	for done := 0; done < len(work); {
		batch := work[done:min(done+c.batch, len(work))]
		n, err := c.embedBatch(ctx, batch)
		sum.Embedded += n
		if err != nil {
			return sum, fmt.Errorf("ingest: embed papers %d-%d of %d: %w", done+1, done+len(batch), len(work), err)
		}
		if err := c.store.Upsert(ctx, batch); err != nil {
			return sum, fmt.Errorf("ingest: store papers %d-%d of %d: %w", done+1, done+len(batch), len(work), err)
		}
		clear(batch) // stored: let their vectors and terms go
		done += len(batch)
		p := IngestProgress{Done: done, Total: len(work), Elapsed: time.Since(start)}
		// The log tells progress unless the caller shows it (a command
		// line's bar or lines): once is enough.
		level := slog.LevelInfo
		if progress != nil {
			level = slog.LevelDebug
		}
		c.log.Log(ctx, level, "ingest progress", "done", p.Done, "total", p.Total,
			"per_second", fmt.Sprintf("%.1f", float64(p.Done)/p.Elapsed.Seconds()), "eta", p.ETA().Round(time.Second))
		if progress != nil {
			progress(p)
		}
	}
	if len(work) > 0 {
		if err := c.store.RefreshLexical(ctx); err != nil {
			return sum, fmt.Errorf("ingest: %w", err)
		}
	}
	sum.Took = time.Since(start)
	return sum, nil
}

// ErrNothingStored is wrapped by the errors of Put: the batch failed as a
// whole and no paper of it was stored.
var ErrNothingStored = errors.New("nothing of the batch was stored")

// Put adds papers as Ingest does, but as one batch: every paper is
// embedded before any is stored, and the store writes them all in one
// Upsert, so that a failure anywhere (embedding, the store, the context's
// end) leaves the store as it was; its error then wraps ErrNothingStored
// as well as the cause. It holds the whole batch's vectors at once: for the
// bounded batches of a request (POST /v1/papers), not for corpora.
func (c *Catalog) Put(ctx context.Context, papers []papersearch.Paper) (papersearch.IngestSummary, error) {
	return c.put(ctx, papers, nil)
}

// put is Put telling embedding, if not nil, after each group of papers
// embedded: how many so far, and how many of the total to store are done.
func (c *Catalog) put(ctx context.Context, papers []papersearch.Paper, embedding func(embedded, done, total int)) (papersearch.IngestSummary, error) {
	start := time.Now()
	work, sum, err := c.plan(ctx, papers)
	if err != nil {
		return sum, fmt.Errorf("%w: %w", ErrNothingStored, err)
	}
	embedded := 0
	for done := 0; done < len(work); done += c.batch {
		batch := work[done:min(done+c.batch, len(work))]
		n, err := c.embedBatch(ctx, batch)
		embedded += n
		if err != nil {
			return papersearch.IngestSummary{}, fmt.Errorf("%w: embed papers %d-%d of %d: %w", ErrNothingStored, done+1, done+len(batch), len(work), err)
		}
		if embedding != nil {
			embedding(embedded, done+len(batch), len(work))
		}
	}
	if err := ctx.Err(); err != nil {
		return papersearch.IngestSummary{}, fmt.Errorf("%w: %w", ErrNothingStored, err)
	}
	if len(work) > 0 {
		if err := c.store.Upsert(ctx, work); err != nil {
			return papersearch.IngestSummary{}, fmt.Errorf("%w: store %d papers: %w", ErrNothingStored, len(work), err)
		}
		if err := c.store.RefreshLexical(ctx); err != nil {
			c.log.Warn("put: lexical statistics not refreshed; the next write refreshes them", "error", err)
		}
	}
	sum.Embedded = embedded
	sum.Took = time.Since(start)
	return sum, nil
}

// plan deduplicates papers by id (the last version at the first place)
// and returns the documents to store, their vectors filled where they can
// be reused, with the summary so far: unchanged papers are done; changed
// ones need storing, and embedding only when their text changed or the
// store keeps sentence vectors and has none of theirs.
func (c *Catalog) plan(ctx context.Context, papers []papersearch.Paper) ([]storage.Document, papersearch.IngestSummary, error) {
	var sum papersearch.IngestSummary
	pos := make(map[string]int, len(papers))
	unique := make([]papersearch.Paper, 0, len(papers))
	for n, p := range papers {
		// Stored as given (tests plant what older versions let in, a
		// javascript: URL say), but never without an id or an abstract.
		var err error
		switch {
		case !papersearch.ValidID(p.ID):
			err = &papersearch.FieldError{Field: "id", Err: papersearch.ErrBadID}
		case strings.TrimSpace(p.Abstract) == "":
			err = &papersearch.FieldError{Field: "abstract", Err: papersearch.ErrNoAbstract}
		}
		if err != nil {
			return nil, sum, fmt.Errorf("paper %d (%q): %w", n, p.ID, err)
		}
		if i, ok := pos[p.ID]; ok {
			unique[i] = p
			sum.Duplicates++
			continue
		}
		pos[p.ID] = len(unique)
		unique = append(unique, p)
	}
	ids := make([]string, len(unique))
	for i, p := range unique {
		ids[i] = p.ID
	}
	stored, err := c.store.Fingerprints(ctx, ids)
	if err != nil {
		return nil, sum, fmt.Errorf("ingest: %w", err)
	}
	keepsSentences := c.store.KeepsSentences()
	now := time.Now().UTC().Truncate(time.Second)
	var work []storage.Document
	for _, p := range unique {
		fp := storage.FingerprintOf(p)
		old, exists := stored[p.ID]
		switch {
		case !exists:
			sum.New++
		case old.PaperHash == fp.PaperHash:
			sum.Unchanged++
			continue
		default:
			sum.Updated++
		}
		doc := storage.Document{Paper: p, TextHash: fp.TextHash, PaperHash: fp.PaperHash}
		// When it was first stored: the earliest time known of it or of the
		// versions merged into it, or now.
		if doc.Paper.Added = papersearch.EarlierAdded(p.Added, old.Added); doc.Paper.Added.IsZero() {
			doc.Paper.Added = now
		}
		if exists && old.TextHash == fp.TextHash {
			prev, err := c.store.Get(ctx, p.ID)
			if err != nil {
				return nil, sum, fmt.Errorf("ingest: reuse vector of %s: %w", p.ID, err)
			}
			// A paper stored without sentence vectors (before stores kept
			// them, or an upgrade dropped them) is embedded again.
			if prev.Sentences != nil || len(papersearch.Sentences(p.Abstract)) == 0 || !keepsSentences {
				doc.Vector, doc.Sentences = prev.Vector, prev.Sentences
				sum.Reused++
			}
		}
		work = append(work, doc)
	}
	c.log.Debug("ingest planned", "papers", len(papers), "new", sum.New, "updated", sum.Updated,
		"unchanged", sum.Unchanged, "to_embed", len(work)-sum.Reused)
	return work, sum, nil
}

// embedBatch analyses a batch's texts and embeds the documents that have
// no vector yet, returning how many it embedded.
func (c *Catalog) embedBatch(ctx context.Context, batch []storage.Document) (int, error) {
	var embedding []*storage.Document
	for i, d := range batch {
		// Analysed here, batch by batch, so a large ingest never holds
		// every paper's terms at once.
		batch[i].Terms = lexical.Analyze(d.Paper.Text())
		if d.Vector == nil {
			embedding = append(embedding, &batch[i])
		}
	}
	if len(embedding) == 0 {
		return 0, nil
	}
	if err := c.embedding.Documents(ctx, embedding); err != nil {
		return 0, err
	}
	return len(embedding), nil
}

// ETA estimates the time left at the rate so far.
func (p IngestProgress) ETA() time.Duration {
	if p.Done == 0 {
		return 0
	}
	return time.Duration(float64(p.Elapsed) / float64(p.Done) * float64(p.Total-p.Done))
}

// scrollPage is how many documents are read from a store at a time.
const scrollPage = 256

// Rebuild ingests every paper of src into the engine's store, embedding each
// with the engine's embedder: the way to move an index to another model.
func (c *Catalog) Rebuild(ctx context.Context, src storage.Store, progress func(IngestProgress)) (papersearch.IngestSummary, error) {
	var total papersearch.IngestSummary
	start := time.Now()
	for cursor := ""; ; {
		docs, next, err := src.Scroll(ctx, cursor, scrollPage)
		if err != nil {
			return total, fmt.Errorf("rebuild: %w", err)
		}
		papers := make([]papersearch.Paper, len(docs))
		for i, d := range docs {
			papers[i] = d.Paper
		}
		if len(papers) > 0 {
			sum, err := c.Ingest(ctx, papers, progress)
			total.Add(sum)
			if err != nil {
				return total, fmt.Errorf("rebuild: %w", err)
			}
		}
		if next == "" {
			break
		}
		cursor = next
	}
	total.Took = time.Since(start)
	return total, nil
}
