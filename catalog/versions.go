package catalog

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/papersearch/papersearch"
)

// The versions of one work (an arXiv preprint, its conference paper, the
// same DOI from two sources) that a batch brings or the store holds are
// merged into one paper as Add stores the batch.

// version is one work while a batch is merged: a paper stored or read.
type version struct {
	paper   papersearch.Paper
	stored  bool     // it is in the store under paper.ID
	touched bool     // the batch brought a version of it
	into    *version // the work it was merged into; nil while it is one
}

// work is the version v is now part of.
func (v *version) work() *version {
	for v.into != nil {
		v = v.into
	}
	return v
}

// merging is what mergeVersions made of a batch.
type merging struct {
	works      []papersearch.Paper // the papers to store, one per work
	ids        []string            // each batch paper's work's id
	absorbed   []string            // stored ids merged into another work: to delete once it is stored
	merged     int                 // versions that joined a work under another id
	duplicates int                 // batch papers whose id came earlier in the batch
}

// storedVersions returns the stored papers that are versions of the
// works batch brings, by id: found by their work keys, or by id for papers
// stored before the store kept work keys.
func (c *Catalog) storedVersions(ctx context.Context, batch []papersearch.Paper) (map[string]papersearch.Paper, error) {
	var keys, ids []string
	for _, p := range batch {
		keys = append(keys, papersearch.WorkKeys(p)...)
		ids = append(ids, p.ID)
	}
	stored, err := c.store.Works(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("add: find stored versions: %w", err)
	}
	byID, err := c.store.Lookup(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("add: find stored versions: %w", err)
	}
	maps.Copy(stored, byID)
	return stored, nil
}

// touchedWorks returns the works a batch brought a version of, each with
// the extra tags added.
func touchedWorks(all []*version, extra []string) ([]papersearch.Paper, error) {
	var works []papersearch.Paper
	for _, v := range all {
		if !v.touched || v.into != nil {
			continue
		}
		tags, ok := papersearch.MergeTags(v.paper.Tags, extra)
		if !ok {
			return nil, fmt.Errorf("add: paper %s: %w", v.paper.ID, papersearch.ErrBadTag)
		}
		v.paper.Tags = tags
		works = append(works, v.paper)
	}
	return works, nil
}

// mergeVersions makes one paper of each work that batch brings a version
// of: the stored versions of the work (found by its keys, see
// papersearch.WorkKeys, or by id) and the versions in batch are merged in
// order (papersearch.Merge) under the id of the first stored one, else of
// the first in batch, and extra tags added. With replace, a batch paper
// first takes the place of the version of its id, stored or earlier in
// the batch, instead of merging into it.
func (c *Catalog) mergeVersions(ctx context.Context, batch []papersearch.Paper, extra []string, replace bool) (merging, error) {
	stored, err := c.storedVersions(ctx, batch)
	if err != nil {
		return merging{}, err
	}
	var m merging
	var all []*version
	owners := make(map[string][]*version) // work key → the versions holding it
	own := func(v *version) {
		for _, k := range papersearch.WorkKeys(v.paper) {
			if !slices.Contains(owners[k], v) {
				owners[k] = append(owners[k], v)
			}
		}
	}
	byPaperID := make(map[string]*version) // each version by its own id
	for _, id := range slices.Sorted(maps.Keys(stored)) {
		v := &version{paper: stored[id], stored: true}
		all = append(all, v)
		byPaperID[id] = v
		own(v)
	}
	into := make([]*version, len(batch))
	seen := make(map[string]bool, len(batch))
	for i, p := range batch {
		if seen[p.ID] {
			m.duplicates++
		}
		seen[p.ID] = true
		if v := byPaperID[p.ID]; replace && v != nil && v.into == nil {
			for _, k := range papersearch.WorkKeys(v.paper) {
				owners[k] = slices.DeleteFunc(owners[k], func(o *version) bool { return o == v })
			}
			v.paper = p
			own(v)
		}
		var found []*version
		for _, k := range papersearch.WorkKeys(p) {
			for _, v := range owners[k] {
				if v.into == nil && !slices.Contains(found, v) {
					found = append(found, v)
				}
			}
		}
		if len(found) == 0 {
			v := &version{paper: p, touched: true}
			all = append(all, v)
			byPaperID[p.ID] = v
			own(v)
			into[i] = v
			continue
		}
		// The work keeps the id of its earliest version: stored ones come
		// first, in id order, then the batch's in order.
		slices.SortFunc(found, func(a, b *version) int { return slices.Index(all, a) - slices.Index(all, b) })
		w := found[0]
		for _, other := range found[1:] {
			w.paper = papersearch.Merge(w.paper, other.paper)
			other.into = w
			m.merged++
			if other.stored {
				m.absorbed = append(m.absorbed, other.paper.ID)
			}
		}
		if p.ID != w.paper.ID {
			m.merged++
		}
		w.paper = papersearch.Merge(w.paper, p)
		w.touched = true
		own(w)
		into[i] = w
	}
	if m.works, err = touchedWorks(all, extra); err != nil {
		return merging{}, err
	}
	m.ids = make([]string, len(batch))
	for i, v := range into {
		m.ids[i] = v.work().paper.ID
	}
	return m, nil
}
