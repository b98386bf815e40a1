package search

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search/storage"
)

// Get returns one paper, or ErrNotFound. An id the paper is known by
// beside its own (a source of it, such as the arXiv id of a paper stored
// under its conference id) finds it too.
func (e *Engine) Get(ctx context.Context, id string) (papersearch.Paper, error) {
	defer e.embedding.Foreground()()
	id = papersearch.CanonicalID(id)
	papers, err := e.store.Lookup(ctx, []string{id})
	if err != nil {
		return papersearch.Paper{}, err
	}
	if p, ok := papers[id]; ok {
		return p, nil
	}
	if papers, err = e.store.Works(ctx, []string{id}); err != nil {
		return papersearch.Paper{}, err
	}
	if len(papers) == 0 {
		return papersearch.Paper{}, fmt.Errorf("%w: %q", storage.ErrNotFound, id)
	}
	return papers[slices.Min(slices.Collect(maps.Keys(papers)))], nil
}

// document returns the stored document of the paper id names: its own,
// or, for an id it is known by beside its own, its work's (see Get).
func (e *Engine) document(ctx context.Context, id string) (storage.Document, error) {
	doc, err := e.store.Get(ctx, id)
	if !errors.Is(err, storage.ErrNotFound) {
		return doc, err
	}
	ids, rerr := e.Resolve(ctx, []string{id})
	if rerr != nil {
		return storage.Document{}, rerr
	}
	if ids[0] == id {
		return storage.Document{}, err
	}
	return e.store.Get(ctx, ids[0])
}

// Resolve returns ids with each id that names no stored paper but is a
// source of one (see Get) replaced by that paper's id; ids naming
// nothing stay as they are.
func (e *Engine) Resolve(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return ids, nil
	}
	ids = slices.Clone(ids)
	for i, id := range ids {
		ids[i] = papersearch.CanonicalID(id)
	}
	stored, err := e.store.Lookup(ctx, ids)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, id := range ids {
		if _, ok := stored[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return ids, nil
	}
	// One read for every id a paper is known by beside its own; an id
	// several papers hold names the least of them, as Get does.
	works, err := e.store.Works(ctx, missing)
	if err != nil {
		return nil, err
	}
	byKey := make(map[string]string)
	for _, id := range slices.Sorted(maps.Keys(works)) {
		for _, k := range papersearch.WorkKeys(works[id]) {
			if _, ok := byKey[k]; !ok {
				byKey[k] = id
			}
		}
	}
	out := slices.Clone(ids)
	for i, id := range ids {
		if w, ok := byKey[id]; ok {
			if _, ok := stored[id]; !ok {
				out[i] = w
			}
		}
	}
	return out, nil
}

// CollectionPapers returns the papers holding tag (at most
// MaxCollectionPapers), by id.
func (e *Engine) CollectionPapers(ctx context.Context, tag string) ([]papersearch.Paper, error) {
	defer e.embedding.Foreground()()
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
