package search

import (
	"context"
	"fmt"
	"slices"

	"github.com/papersearch/papersearch"
)

// MaxRetag bounds the papers one Retag changes.
const MaxRetag = 1000

// Retag adds the tags add to the papers ids (each a paper's id or a
// source id of one) and removes the tags remove from them, and stores
// them at once, whole or not at all (Put); it returns the papers as
// stored. An unknown id is an error wrapping ErrNotFound, a paper that
// would hold more than papersearch.MaxTags tags one wrapping
// papersearch.ErrBadTag, each a FieldError naming the id's place
// ("ids/2").
func (e *Engine) Retag(ctx context.Context, ids, add, remove []string) ([]papersearch.Paper, error) {
	defer e.lanes.foreground()()
	if len(ids) == 0 || len(ids) > MaxRetag {
		return nil, invalidField("ids", fmt.Sprintf("must hold 1 to %d paper ids", MaxRetag))
	}
	add, ok := papersearch.CleanTags(add)
	if !ok {
		return nil, &papersearch.FieldError{Field: "tags", Err: papersearch.ErrBadTag}
	}
	remove, _ = papersearch.CleanTags(remove)
	resolved, err := e.resolve(ctx, ids)
	if err != nil {
		return nil, err
	}
	stored, err := e.store.Lookup(ctx, resolved)
	if err != nil {
		return nil, err
	}
	var papers []papersearch.Paper
	done := map[string]bool{}
	for i, id := range resolved {
		p, ok := stored[id]
		if !ok {
			return nil, &papersearch.FieldError{Field: fmt.Sprintf("ids/%d", i), Err: fmt.Errorf("%w: %q", ErrNotFound, ids[i])}
		}
		if done[id] {
			continue // named twice, or by two of its ids
		}
		done[id] = true
		tags := slices.DeleteFunc(slices.Concat(p.Tags, add), func(t string) bool { return slices.Contains(remove, t) })
		if p.Tags, ok = papersearch.CleanTags(tags); !ok {
			return nil, &papersearch.FieldError{Field: fmt.Sprintf("ids/%d", i), Err: papersearch.ErrBadTag,
				Reason: fmt.Sprintf("names a paper that would hold more than %d tags", papersearch.MaxTags)}
		}
		papers = append(papers, p)
	}
	if _, err := e.Put(ctx, papers); err != nil {
		return nil, err
	}
	return papers, nil
}

// CollectionPapers returns the papers holding tag (at most
// MaxCollectionPapers), by id.
func (e *Engine) CollectionPapers(ctx context.Context, tag string) ([]papersearch.Paper, error) {
	defer e.lanes.foreground()()
	tags, ok := papersearch.CleanTags([]string{tag})
	if !ok || len(tags) != 1 {
		return nil, invalidField("tag", "must be a tag: "+papersearch.ErrBadTag.Error())
	}
	ids, err := e.tagged(ctx, tags[0])
	if err != nil {
		return nil, err
	}
	byID, err := e.store.Lookup(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]papersearch.Paper, 0, len(byID))
	for _, id := range ids {
		if p, ok := byID[id]; ok {
			out = append(out, p)
		}
	}
	return out, nil
}
