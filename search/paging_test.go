package search

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/papersearch/papersearch/search/storage"
)

// TestEveryPageSizeCutsOneRanking pages rankings of more candidates than
// paging reaches, and of fewer, in pages of every size from 1 to 100:
// put together, the pages are the first maxSeen papers of the ranking the
// README documents (the fusion of each retrieval's CandidateDepth best,
// then what the fusion of their maxSeen best adds), in its order, and
// stop there. Hybrid pages of 37 had gone on to 1,036 papers, of 99 to
// 1,089: the page that passed maxSeen was not cut.
func TestEveryPageSizeCutsOneRanking(t *testing.T) {
	ctx := context.Background()
	e := &Engine{opts: Options{Fusion: &DefaultFusion}}
	for _, tt := range []struct {
		mode       Mode
		dense, lex int // candidates each retrieval has in all
	}{
		{Hybrid, 2000, 1400},
		{Dense, 2000, 0},
		{Lexical, 0, 1400},
		{Hybrid, 640, 250}, // fewer than maxSeen in all
		{Hybrid, 60, 40},   // the first ranking is all
	} {
		t.Run(fmt.Sprintf("%s %d dense %d lexical", tt.mode, tt.dense, tt.lex), func(t *testing.T) {
			t.Parallel()
			dense, lex := candidates(1, tt.dense, 0.9), candidates(2, tt.lex, 20)
			at := func(depth int) ([]storage.Candidate, storage.Matches) {
				return dense[:min(depth, len(dense))], storage.Matches{Candidates: lex[:min(depth, len(lex))], Ideal: 25}
			}
			d, l := at(CandidateDepth)
			r := e.fusedRanking(tt.mode, d, l,
				func(_ context.Context, depth int) ([]storage.Candidate, error) { d, _ := at(depth); return d, nil },
				func(_ context.Context, depth int) (storage.Matches, error) { _, l := at(depth); return l, nil })
			// Made once, as a deterministic retrieval would make it again.
			made := r.deeper
			deeper := sync.OnceValues(func() ([]Fused, error) { return made(ctx) })
			r.deeper = func(context.Context) ([]Fused, error) { return deeper() }
			want := documentedRanking(tt.mode, *e.opts.Fusion, at)
			all := map[string]bool{}
			for _, c := range slices.Concat(dense, lex) {
				all[c.ID] = true
			}
			if len(want) != min(len(all), maxSeen) {
				t.Fatalf("the ranking holds %d papers of %d, want %d", len(want), len(all), min(len(all), maxSeen))
			}
			for i := 1; i < len(want); i++ {
				if want[i].Score > want[i-1].Score {
					t.Fatalf("the score rises from %g at %d to %g at %d", want[i-1].Score, i, want[i].Score, i+1)
				}
			}
			for size := 1; size <= MaxLimit; size++ {
				var seen []string
				var seenSet seenPapers
				for more := true; more; {
					var next []Fused
					var err error
					if next, more, err = r.pageAfter(ctx, seenSet, size); err != nil {
						t.Fatal(err)
					}
					if len(next) == 0 || len(next) > size {
						t.Fatalf("pages of %d: a page of %d after %d", size, len(next), len(seen))
					}
					for _, x := range next {
						if len(seen) == len(want) {
							t.Fatalf("pages of %d: %s after the %d papers of the ranking", size, x.ID, len(want))
						}
						if w := want[len(seen)]; x != w {
							t.Fatalf("pages of %d: %+v at %d, the ranking has %+v", size, x, len(seen)+1, w)
						}
						seen = append(seen, x.ID)
						seenSet.add(x.ID)
					}
				}
				if len(seen) != len(want) {
					t.Fatalf("pages of %d stopped at %d papers, want %d", size, len(seen), len(want))
				}
			}
		})
	}
}

// candidates returns n candidates of the ids p0 to p2999 drawn by seed,
// best first, scores falling from top by uneven steps.
func candidates(seed uint64, n int, top float32) []storage.Candidate {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]storage.Candidate, n)
	score := top
	for i, k := range rng.Perm(3000)[:n] {
		score -= top * rng.Float32() / 1000
		out[i] = storage.Candidate{ID: fmt.Sprintf("p%d", k), Score: score}
	}
	return out
}

// documentedRanking is the ranking of a query whose retrievals at depth
// return at(depth), as the README has it, made without paging: the fusion
// of the CandidateDepth best of each, then the papers the fusion of the
// maxSeen best of each adds, in its order, each scored at most as the one
// before it, cut at maxSeen.
func documentedRanking(mode Mode, f Fusion, at func(depth int) ([]storage.Candidate, storage.Matches)) []Fused {
	d, l := at(CandidateDepth)
	first := merge(mode, d, l, f)
	d, l = at(maxSeen)
	deep := merge(mode, d, l, f)
	out := slices.Clone(first)
	for _, x := range deep {
		if !slices.ContainsFunc(first, func(y Fused) bool { return y.ID == x.ID }) {
			x.Score = min(x.Score, out[len(out)-1].Score)
			out = append(out, x)
		}
	}
	return out[:min(len(out), maxSeen)]
}

// TestCursorSize: a cursor at the deepest page holds a digest a paper,
// whatever the ids' length (1,000 ids of 200 characters), under 7 KB;
// it reads back as the same papers seen; a version 1 cursor (the ids
// themselves, as JSON) signed by the engine still reads; a cursor whose
// digests are cut mid-way names no page.
func TestCursorSize(t *testing.T) {
	e := &Engine{opts: Options{CursorKey: []byte("k")}}
	fp := Query{Text: "graphs"}.fingerprint("search")
	seen := seenPapers{key: e.opts.CursorKey}
	ids := make([]string, maxSeen)
	for i := range ids {
		ids[i] = fmt.Sprintf("%0200d", i)
		seen.add(ids[i])
	}
	c := e.encodeCursor(fp, seen)
	if len(c) > 7000 {
		t.Errorf("a cursor past %d papers is %d bytes", maxSeen, len(c))
	}
	back, err := e.decodeCursor(c, fp)
	if err != nil || back.len() != maxSeen || !back.has(ids[0]) || !back.has(ids[maxSeen-1]) || back.has("another") {
		t.Fatalf("read back: %d papers, %v", back.len(), err)
	}
	v1, _ := json.Marshal(cursorV1{V: 1, Query: fp, Seen: ids[:3]})
	old := base64.RawURLEncoding.EncodeToString(v1) + "." + base64.RawURLEncoding.EncodeToString(e.cursorMAC(v1))
	if back, err := e.decodeCursor(old, fp); err != nil || back.len() != 3 || !back.has(ids[2]) || back.has(ids[3]) {
		t.Errorf("a version 1 cursor: %d papers, %v", back.len(), err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(strings.Split(c, ".")[0])
	cut := raw[:len(raw)-2]
	if _, err := e.decodeCursor(base64.RawURLEncoding.EncodeToString(cut)+"."+base64.RawURLEncoding.EncodeToString(e.cursorMAC(cut)), fp); err == nil {
		t.Error("a cursor cut mid-digest was read")
	}
}
