package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/storage"
)

// TestVote: each candidate's vote, whether its group of twelve is whole or
// not, is the mean of its three highest cosines with the members
// less neighbourAgainst times its highest with a dismissed paper, each
// cosine embed.Dot's, bit for bit; with fewer members than voters, all
// vote.
func TestVote(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	unit := func(n int) []float32 {
		v := make([]float32, n)
		var s float64
		for i := range v {
			v[i] = float32(r.NormFloat64())
			s += float64(v[i]) * float64(v[i])
		}
		for i := range v {
			v[i] /= float32(math.Sqrt(s))
		}
		return v
	}
	const dim = 768
	for _, shape := range [][3]int{{10, 7, 2}, {4, 2, 0}, {3, 50, 1}, {9, 1, 0}, {27, 50, 3}} {
		nc, nm, nd := shape[0], shape[1], shape[2]
		vecs := map[string][]float32{}
		var cands []storage.Candidate
		for i := range nc {
			id := fmt.Sprint("c", i)
			vecs[id] = unit(dim + 384) // stored vectors are longer than the core
			cands = append(cands, storage.Candidate{ID: id})
		}
		var members, dismissed [][]float32
		for range nm {
			members = append(members, unit(dim))
		}
		for range nd {
			dismissed = append(dismissed, unit(dim))
		}
		vote(cands, vecs, dim, members, dismissed)
		for _, c := range cands {
			v := vecs[c.ID][:dim]
			var sims []float32
			for _, m := range members {
				sims = append(sims, embed.Dot(m, v))
			}
			slices.Sort(sims)
			slices.Reverse(sims)
			voters := sims[:min(neighbourVoters, len(sims))]
			var want float32
			for _, s := range voters {
				want += s
			}
			want /= float32(len(voters))
			if nd > 0 {
				against := float32(-1)
				for _, d := range dismissed {
					against = max(against, embed.Dot(d, v))
				}
				want -= neighbourAgainst * against
			}
			if math.Float32bits(c.Score) != math.Float32bits(want) {
				t.Fatalf("shape %v candidate %s: vote %v, want %v", shape, c.ID, c.Score, want)
			}
		}
	}
}
