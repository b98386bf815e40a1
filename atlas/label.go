package atlas

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/papersearch/papersearch/search/lexical"
)

// Topic names a cluster: its most distinctive terms, most distinctive
// first.
type Topic struct {
	Terms []string
}

// Label returns, level by level, each cluster's Topic: the terms (words
// and two-word phrases of the papers' texts, function words left out)
// that the cluster's papers use far more than the others, by class-based
// TF-IDF (BERTopic's c-TF-IDF, over the papers that hold a term): a
// term's share of the cluster's terms times log(1 + A/f), A the terms of
// an average cluster and f the term's count in all. A term shown is the
// form the papers write most often ("networks" and "network" are one
// term, shown as whichever is commoner). A phrase's words are not shown
// again alone. A term distinctive of more than a quarter of a level's
// clusters (and of more than three) names none of them while each has
// enough other distinctive terms.
func Label(texts []string, h Hierarchy, terms int) [][]Topic {
	docs := make([][]string, len(texts))
	shown := map[string]map[string]int{} // term -> written form -> count
	for i, text := range texts {
		docs[i] = docTerms(text, shown)
	}
	out := make([][]Topic, len(h.Of))
	for l, of := range h.Of {
		if len(of) == 0 {
			continue
		}
		k := slices.Max(of) + 1
		counts := make([]map[string]int, k)
		for c := range counts {
			counts[c] = map[string]int{}
		}
		total := map[string]int{}
		sizes := make([]int, k)
		for i, ts := range docs {
			for _, t := range ts {
				counts[of[i]][t]++
				total[t]++
				sizes[of[i]]++
			}
		}
		var avg float64
		for _, s := range sizes {
			avg += float64(s)
		}
		avg /= float64(k)
		type scored struct {
			term        string
			score       float64
			distinctive bool
		}
		ranked := make([][]scored, k)
		floors := make([]int, k)
		members := make([]int, k)
		for _, c := range of {
			members[c]++
		}
		// In how many clusters each term is distinctive: one that sets
		// apart a good share of them ("algorithm", "problem") tells none
		// of them apart.
		spread := map[string]int{}
		for c, cnt := range counts {
			floors[c] = max(2, members[c]/50) // a term a handful of papers hold is noise
			for t, n := range cnt {
				if n < floors[c] {
					continue
				}
				r := scored{term: t, score: float64(n) / float64(sizes[c]) * math.Log(1+avg/float64(total[t]))}
				if rest := len(of) - members[c]; rest > 0 {
					// Against the other clusters' papers: the share of
					// the cluster's papers holding the term times the log
					// of how many times more often they hold it (smoothed
					// by one paper), so a word every paper writes
					// ("model", "propose") weighs little beside one the
					// cluster has to itself, however large the cluster.
					in := float64(n) / float64(members[c])
					out := (float64(total[t]-n) + 1) / float64(rest+1)
					r.score = in * math.Log(in/out)
					// What the cluster's papers hold half as often again
					// as the others' is distinctive.
					r.distinctive = 2*n*rest >= 3*(total[t]-n)*members[c]
				}
				ranked[c] = append(ranked[c], r)
				if r.distinctive {
					spread[t]++
				}
			}
		}
		common := max(3, k/4)
		topics := make([]Topic, k)
		for c, cnt := range counts {
			floor := floors[c]
			// The distinctive terms name a cluster that has some; one
			// that has none (most of a small corpus) is named by its
			// best terms all the same. Terms distinctive in more than a
			// quarter of the clusters (and more than three) give way to the
			// rest when there are enough of those.
			ranked := ranked[c]
			if slices.ContainsFunc(ranked, func(r scored) bool { return r.distinctive }) {
				ranked = slices.DeleteFunc(ranked, func(r scored) bool { return !r.distinctive })
			}
			if rare := slices.DeleteFunc(slices.Clone(ranked), func(r scored) bool { return spread[r.term] > common }); len(rare) >= terms {
				ranked = rare
			}
			// Words of scholarly writing alone name no cluster that has
			// any other term: a shorter name says more.
			if telling := slices.DeleteFunc(slices.Clone(ranked), func(r scored) bool { return boilerplate(r.term) }); len(telling) > 0 {
				ranked = telling
			}
			slices.SortFunc(ranked, func(a, b scored) int { return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(a.term, b.term)) })
			// A word is shown as the phrase it mostly stands in, when
			// the cluster holds one: "protein folding", not "folding".
			phrase := map[string]string{}
			for t, n := range cnt {
				words := strings.Fields(t)
				if len(words) != 2 || n < floor {
					continue
				}
				for _, w := range words {
					if p, ok := phrase[w]; 2*n >= cnt[w] && (!ok || n > cnt[p] || n == cnt[p] && t < p) {
						phrase[w] = t
					}
				}
			}
			var chosen []string
			for _, r := range ranked {
				if len(chosen) == terms {
					break
				}
				t := r.term
				if p, ok := phrase[t]; ok {
					t = p
				}
				if covered(t, chosen) {
					continue
				}
				chosen = append(chosen, t)
			}
			for i, t := range chosen {
				chosen[i] = written(t, shown)
			}
			topics[c] = Topic{Terms: chosen}
		}
		out[l] = topics
	}
	return out
}

// docTerms is a text's distinct terms: its index terms (stems) that are
// not function words, numbers or single letters, and each two such words
// side by side in the text as a phrase; shown counts each term's written
// forms.
func docTerms(text string, shown map[string]map[string]int) []string {
	seen := map[string]bool{}
	var prev, prevWord string
	add := func(term, word string) {
		if seen[term] {
			return
		}
		seen[term] = true
		if shown[term] == nil {
			shown[term] = map[string]int{}
		}
		shown[term][word]++
	}
	for _, word := range clauseWords(text) {
		if word == "" { // a clause ends: no phrase spans it
			prev = ""
			continue
		}
		term, ok := lexical.Term(word)
		if !ok || lexical.IsFunctionWord(word) || len([]rune(word)) < 3 || !strings.ContainsFunc(word, unicode.IsLetter) {
			prev = ""
			continue
		}
		add(term, word)
		if prev != "" && prev != term {
			add(prev+" "+term, prevWord+" "+word)
		}
		prev, prevWord = term, word
	}
	out := make([]string, 0, len(seen))
	for t := range seen {
		out = append(out, t)
	}
	return out
}

// clauseWords is lexical.Words of each clause of text (split at . , ; :
// ! ? and brackets), an empty word between clauses. PDF extraction's
// glyph references ("(cid:123)", a character the extractor could not map)
// are not words of the text and are left out.
func clauseWords(text string) []string {
	text = glyphRef.ReplaceAllLiteralString(text, " ")
	var out []string
	for _, clause := range strings.FieldsFunc(text, func(r rune) bool { return strings.ContainsRune(".,;:!?()[]{}", r) }) {
		out = append(append(out, lexical.Words(clause)...), "")
	}
	return out
}

// glyphRef matches a PDF extractor's reference to a glyph it could not
// map to a character.
var glyphRef = regexp.MustCompile(`\(cid:\d+\)`)

// scholarly are the words of scholarly writing that any field's papers
// use ("we propose a model for the task"), as index terms: a cluster may
// use them more than the others, but they tell a reader nothing of what
// it is about.
var scholarly = func() map[string]bool { // read-only
	m := map[string]bool{}
	for _, w := range strings.Fields(`algorithm algorithms approach approaches framework method methods model models
		problem problems propose proposed present presents show shows shown task tasks result results paper work
		new novel based using use used performance real world state art experiments experimental demonstrate
		existing effective efficient improve improves improved achieve achieves different various several
		study studies introduce provide provides significantly outperforms evaluate analysis`) {
		t, _ := lexical.Term(w)
		m[t] = true
	}
	return m
}()

// boilerplate reports whether every word of term is one of scholarly
// writing's.
func boilerplate(term string) bool {
	for _, w := range strings.Fields(term) {
		if !scholarly[w] {
			return false
		}
	}
	return true
}

// covered reports whether term repeats what a chosen term says: a word of
// a chosen phrase, or a phrase holding a chosen word.
func covered(term string, chosen []string) bool {
	words := strings.Fields(term)
	for _, c := range chosen {
		cw := strings.Fields(c)
		for _, w := range words {
			if slices.Contains(cw, w) {
				return true
			}
		}
	}
	return false
}

// written is the form of term the papers write most (ties: the first in
// order).
func written(term string, shown map[string]map[string]int) string {
	best, n := term, -1
	for w, c := range shown[term] {
		if c > n || c == n && w < best {
			best, n = w, c
		}
	}
	return best
}

// NameOverlap measures how well a level's topic names tell its clusters
// apart: the mean and the largest overlap (Jaccard index of their words,
// a phrase's words counted singly) of two topics' terms over all pairs,
// and the share of the terms that are words of scholarly writing alone
// ("model", "propose", "problem").
func NameOverlap(topics []Topic) (mean, most, plainShare float64) {
	words := make([]map[string]bool, len(topics))
	var terms, plain int
	for i, t := range topics {
		words[i] = map[string]bool{}
		for _, term := range t.Terms {
			terms++
			stems := make([]string, 0, 2)
			for _, w := range strings.Fields(term) {
				s, _ := lexical.Term(w)
				stems = append(stems, s)
				words[i][s] = true
			}
			if boilerplate(strings.Join(stems, " ")) {
				plain++
			}
		}
	}
	pairs := 0
	for i := range words {
		for j := i + 1; j < len(words); j++ {
			inter := 0
			for w := range words[i] {
				if words[j][w] {
					inter++
				}
			}
			if union := len(words[i]) + len(words[j]) - inter; union > 0 {
				o := float64(inter) / float64(union)
				mean += o
				most = max(most, o)
			}
			pairs++
		}
	}
	if pairs > 0 {
		mean /= float64(pairs)
	}
	if terms > 0 {
		plainShare = float64(plain) / float64(terms)
	}
	return mean, most, plainShare
}
