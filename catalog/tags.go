package catalog

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/storage"
)

// MaxRetag bounds the papers one Retag changes.
const MaxRetag = 1000

// Retag adds the tags add to the papers ids (each a paper's id or a
// source id of one) and removes the tags remove from them, and stores
// them at once, whole or not at all (Put); it returns the papers as
// stored. An unknown id is an error wrapping storage.ErrNotFound, a paper that
// would hold more than papersearch.MaxTags tags one wrapping
// papersearch.ErrBadTag, each a FieldError naming the id's place
// ("ids/2").
func (c *Catalog) Retag(ctx context.Context, ids, add, remove []string) ([]papersearch.Paper, error) {
	defer c.embedding.Foreground()()
	if len(ids) == 0 || len(ids) > MaxRetag {
		return nil, &papersearch.FieldError{Field: "ids", Reason: fmt.Sprintf("must hold 1 to %d paper ids", MaxRetag), Err: search.ErrInvalidQuery}
	}
	add, ok := papersearch.CleanTags(add)
	if !ok {
		return nil, &papersearch.FieldError{Field: "tags", Err: papersearch.ErrBadTag}
	}
	// Any tag may be removed, one an earlier version's rule took included.
	remove = slices.Clone(remove)
	for i, t := range remove {
		remove[i] = strings.ToLower(t)
	}
	resolved, err := c.engine.Resolve(ctx, ids)
	if err != nil {
		return nil, err
	}
	stored, err := c.store.Lookup(ctx, resolved)
	if err != nil {
		return nil, err
	}
	var papers []papersearch.Paper
	done := map[string]bool{}
	for i, id := range resolved {
		p, ok := stored[id]
		if !ok {
			return nil, &papersearch.FieldError{Field: fmt.Sprintf("ids/%d", i), Err: fmt.Errorf("%w: %q", storage.ErrNotFound, ids[i])}
		}
		if done[id] {
			continue // named twice, or by two of its ids
		}
		done[id] = true
		kept := slices.DeleteFunc(slices.Clone(p.Tags), func(t string) bool { return slices.Contains(remove, t) })
		if p.Tags, ok = papersearch.MergeTags(kept, slices.DeleteFunc(slices.Clone(add), func(t string) bool { return slices.Contains(remove, t) })); !ok {
			return nil, &papersearch.FieldError{Field: fmt.Sprintf("ids/%d", i), Err: papersearch.ErrBadTag,
				Reason: fmt.Sprintf("names a paper that would hold more than %d tags", papersearch.MaxTags)}
		}
		papers = append(papers, p)
	}
	if _, err := c.Put(ctx, papers); err != nil {
		return nil, err
	}
	return papers, nil
}
