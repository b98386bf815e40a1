package search

import (
	"testing"

	"github.com/papersearch/papersearch/search/roles"
	"github.com/papersearch/papersearch/search/storage"
)

// TestAspectMatcherComparesTheAspectsRole: a probe that asks for the
// aspect's role is compared only with a candidate's sentences of that
// role, however well another matches, and with all of them when the
// candidate has none of it; a probe that does not ask, or a matcher not by
// role, compares every sentence.
func TestAspectMatcherComparesTheAspectsRole(t *testing.T) {
	unit := func(i int) []float32 {
		v := make([]float32, 4)
		v[i] = 1
		return v
	}
	mixed := func(a, b float32) []float32 { return []float32{a, b, 0, 0} }
	// The probe is unit(0); the candidate's background sentence is it
	// exactly, its method sentence only 0.6 of it.
	cand := []storage.Sentence{
		{Role: roles.Background, Vector: unit(0)},
		{Role: roles.Method, Vector: mixed(0.6, 0.8)},
	}
	noMethod := []storage.Sentence{
		{Role: roles.Background, Vector: mixed(0.6, 0.8)},
		{Role: roles.Result, Vector: unit(0)},
	}
	for _, tc := range []struct {
		name             string
		byRole, sameRole bool
		sentences        []storage.Sentence
		best             float32
		at               int
	}{
		{"the role's sentence only", true, true, cand, 0.6, 1},
		{"no sentence of the role: all", true, true, noMethod, 1, 1},
		{"a probe not asking for its role", true, false, cand, 1, 0},
		{"a matcher not by role", false, true, cand, 1, 0},
	} {
		m := aspectMatcher{probes: []probe{{vec: unit(0), sameRole: tc.sameRole}}, role: roles.Method, byRole: tc.byRole, match: matchBest}
		got := m.score(storage.Candidate{ID: "c", Score: 0.5}, 0, tc.sentences, nil)
		if got.match.Similarity < tc.best-1e-6 || got.match.Similarity > tc.best+1e-6 || got.ci != tc.at {
			t.Errorf("%s: best %v at sentence %d, want %v at %d", tc.name, got.match.Similarity, got.ci, tc.best, tc.at)
		}
	}
}
