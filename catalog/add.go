package catalog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/storage"
)

// AddOptions shape Add.
type AddOptions struct {
	// Tags are added to every paper, beside those it holds and those the
	// store holds for its work.
	Tags []string
	// Replace makes a paper whose id is stored (or came earlier in the
	// batch) replace that version whole, as a POST of it does, instead of
	// merging into it; versions under other ids are merged either way.
	Replace bool
	// RefuseAdded makes a paper that says when it was added invalid (a
	// FieldError of its "added" wrapping ErrAddedGiven): a request's,
	// whose added time is the store's to say. Without it the time given is
	// dropped (an import's records may carry one).
	RefuseAdded bool
	// embedding, if set, is told after each group of papers embedded
	// how many were embedded and how many of total papers to store are
	// done.
	embedding func(embedded, done, total int)
}

// AddSummary says what Add did.
type AddSummary struct {
	papersearch.IngestSummary
	// Merged counts the versions that joined a work under another id.
	Merged int
	// IDs holds, for each paper given, the id of the paper it is stored
	// as: its own, or that of the work it joined.
	IDs []string
}

// Add is the one way papers come into the store: a batch becomes one
// paper per work (the versions of a work stored or in the batch merged,
// see Import), each checked and tidied by papersearch.Complete, tagged
// with opts.Tags, embedded where its text is new and stored whole or not
// at all (as Put; then no paper of it is stored). A batch holding a paper
// that is not valid is refused whole with an *InvalidError. Stored versions
// merged into a work under another id are removed after the work is
// stored. Import calls it per batch; POST /v1/papers once, with Replace.
func (c *Catalog) Add(ctx context.Context, papers []papersearch.Paper, opts AddOptions) (AddSummary, error) {
	tags, ok := papersearch.CleanTags(opts.Tags)
	if !ok {
		return AddSummary{}, fmt.Errorf("add: %w", papersearch.ErrBadTag)
	}
	papers, err := Check(papers, opts)
	if err != nil {
		return AddSummary{}, err
	}
	return c.add(ctx, papers, tags, opts)
}

// add is Add of papers already checked (Check), with clean tags.
func (c *Catalog) add(ctx context.Context, papers []papersearch.Paper, tags []string, opts AddOptions) (AddSummary, error) {
	m, err := c.mergeVersions(ctx, papers, tags, opts.Replace)
	if err != nil {
		return AddSummary{}, err
	}
	s, err := c.put(ctx, m.works, opts.embedding)
	sum := AddSummary{IngestSummary: s, Merged: m.merged, IDs: m.ids}
	sum.Duplicates += m.duplicates
	if err != nil {
		return sum, err
	}
	// The works now hold what the absorbed papers held.
	for _, id := range m.absorbed {
		if err := c.store.Delete(ctx, id); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return sum, fmt.Errorf("add: remove %s, merged into another version: %w", id, err)
		}
	}
	return sum, nil
}

// InvalidError refuses a batch holding papers that are not valid: nothing
// of it is stored. It wraps ErrNothingStored and each paper's
// *papersearch.FieldError.
type InvalidError struct {
	// Papers is how many papers the batch held.
	Papers int
	// Invalid lists the papers that are not valid, by their place in the
	// batch.
	Invalid []Invalid
}

// Invalid is one paper of a batch that is not valid.
type Invalid struct {
	Index int
	// Err is the *papersearch.FieldError naming the first invalid field.
	Err error
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("%d of %d papers are invalid (the first, paper %d: %v)",
		len(e.Invalid), e.Papers, e.Invalid[0].Index, e.Invalid[0].Err)
}

func (e *InvalidError) Unwrap() []error {
	out := []error{ErrNothingStored}
	for _, in := range e.Invalid {
		out = append(out, in.Err)
	}
	return out
}

// ErrAddedGiven is wrapped by the FieldError of a paper that says when it
// was added where AddOptions.RefuseAdded refuses it.
var ErrAddedGiven = errors.New("added is when the service first stored the paper: leave it out")

// Check returns papers as Add stores them, each passed through
// papersearch.Complete with when it was added cleared (the store's to say,
// not the caller's), or an *InvalidError listing those that are not valid
// (with opts.RefuseAdded, those that say when they were added too).
func Check(papers []papersearch.Paper, opts AddOptions) ([]papersearch.Paper, error) {
	out := make([]papersearch.Paper, len(papers))
	var invalid []Invalid
	for i, p := range papers {
		if opts.RefuseAdded && !p.Added.IsZero() {
			invalid = append(invalid, Invalid{Index: i, Err: &papersearch.FieldError{Field: "added", Err: ErrAddedGiven}})
			continue
		}
		done, err := checked(p)
		if err != nil {
			invalid = append(invalid, Invalid{Index: i, Err: err})
			continue
		}
		out[i] = done
	}
	if len(invalid) > 0 {
		return nil, &InvalidError{Papers: len(papers), Invalid: invalid}
	}
	return out, nil
}

// checked is p as Add stores it: passed through papersearch.Complete, when
// it was added cleared.
func checked(p papersearch.Paper) (papersearch.Paper, error) {
	done, err := papersearch.Complete(p)
	done.Added = time.Time{}
	return done, err
}

// Update replaces the stored paper p.ID names with p, as it is once
// papersearch.Complete has checked and tidied it, keeping the id and when
// it was first stored, and returns it as stored: how a paper is edited
// (PATCH /v1/papers/{id}). An invalid p is refused with the
// *papersearch.FieldError Complete returns; one whose id names no stored
// paper with an error wrapping storage.ErrNotFound. Unlike Add, it merges
// no other version into it: an edit keeps the paper where it is.
func (c *Catalog) Update(ctx context.Context, p papersearch.Paper) (papersearch.Paper, error) {
	done, err := papersearch.Complete(p)
	if err != nil {
		return papersearch.Paper{}, err
	}
	stored, err := c.store.Lookup(ctx, []string{done.ID})
	if err != nil {
		return papersearch.Paper{}, err
	}
	old, ok := stored[done.ID]
	if !ok {
		return papersearch.Paper{}, fmt.Errorf("%w: %q", storage.ErrNotFound, done.ID)
	}
	done.Added = old.Added
	if _, err := c.Put(ctx, []papersearch.Paper{done}); err != nil {
		return papersearch.Paper{}, err
	}
	// As the store keeps it (an added time it had none of is now's).
	if stored, err = c.store.Lookup(ctx, []string{done.ID}); err != nil {
		return papersearch.Paper{}, err
	}
	return stored[done.ID], nil
}
