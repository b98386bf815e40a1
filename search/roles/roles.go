// Package roles labels the sentences of an abstract with their rhetorical
// role: background (with the objective), method, result (with the
// conclusions) or other. The classifier is a multinomial logistic
// regression over hashed word features and the sentence's place in the
// abstract, decoded over the whole abstract with learned transitions
// between roles (Viterbi), trained on CSAbstruct (Cohan et al. 2019,
// Apache-2.0) by internal/train; its weights ship in the binary.
package roles

//go:generate go run ./internal/train -data ../../../shared/data/csabstruct -out weights.bin

import (
	_ "embed"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"

	"github.com/papersearch/papersearch/search/lexical"
)

// Role is the rhetorical role of a sentence.
type Role int

// The roles, in the order of the classifier's outputs.
const (
	Background Role = iota // background, motivation, objective
	Method                 // method, approach, experimental setup
	Result                 // results, findings, conclusions
	Other                  // anything else (acknowledgements, venue notes)
	numRoles
)

var roleNames = [numRoles]string{"background", "method", "result", "other"}

// String returns the role's name: "background", "method", "result", "other".
func (r Role) String() string {
	if r < 0 || r >= numRoles {
		return "Role(" + strconv.Itoa(int(r)) + ")"
	}
	return roleNames[r]
}

// Parse returns the role a name names; CSAbstruct's "objective" is
// Background.
func Parse(name string) (Role, error) {
	switch name {
	case "background", "objective":
		return Background, nil
	case "method":
		return Method, nil
	case "result":
		return Result, nil
	case "other":
		return Other, nil
	}
	return 0, fmt.Errorf("unknown sentence role %q", name)
}

// buckets is the number of hashed word features.
const buckets = 1 << 15

// Features of one sentence beyond its words: where it is in the abstract.
const (
	posBins     = 6
	lenBins     = 8
	firstFeat   = buckets
	lastFeat    = buckets + 1
	posFeat     = buckets + 2       // + the bin of its relative position
	lenFeat     = posFeat + posBins // + the bin of the abstract's length
	biasFeat    = lenFeat + lenBins
	numFeatures = biasFeat + 1
)

// features returns the feature indexes of sentence i of n (each of value
// 1): hashed word unigrams and bigrams, the first two words, whether it
// holds a number, and its place.
func features(sentence string, i, n int) []int {
	words := lexical.Words(sentence)
	out := make([]int, 0, 2*len(words)+8)
	hash := func(kind, s string) {
		h := fnv.New32a()
		h.Write([]byte(kind))
		h.Write([]byte(s))
		out = append(out, int(h.Sum32()%buckets))
	}
	digits := false
	for j, w := range words {
		hash("w", w)
		if j > 0 {
			hash("b", words[j-1]+" "+w)
		}
		if !digits && w[0] >= '0' && w[0] <= '9' {
			digits = true
		}
	}
	switch {
	case len(words) >= 2:
		hash("f", words[0]+" "+words[1])
	case len(words) == 1:
		hash("f", words[0])
	}
	if digits {
		hash("d", "")
	}
	if i == 0 {
		out = append(out, firstFeat)
	}
	if i == n-1 {
		out = append(out, lastFeat)
	}
	out = append(out, posFeat+i*posBins/max(n, 1), lenFeat+min(n, lenBins)-1, biasFeat)
	return out
}

// Classifier labels an abstract's sentences.
type Classifier struct {
	w [numRoles][]float32 // per role, a weight per feature
	// start and trans are log-probabilities of the first role and of a
	// role after another; lambda weighs them against the sentence's own
	// scores.
	start  [numRoles]float32
	trans  [numRoles][numRoles]float32
	lambda float32
}

//go:embed weights.bin
var shipped []byte

// New returns the classifier whose weights ship in the binary.
func New() (*Classifier, error) {
	c := new(Classifier)
	if err := c.UnmarshalBinary(shipped); err != nil {
		return nil, fmt.Errorf("sentence roles: %w", err)
	}
	return c, nil
}

// scores returns the log-probabilities of each role for one sentence.
func (c *Classifier) scores(feats []int) [numRoles]float32 {
	var s [numRoles]float32
	for r := range numRoles {
		for _, f := range feats {
			s[r] += c.w[r][f]
		}
	}
	return logSoftmax(s)
}

func logSoftmax(s [numRoles]float32) [numRoles]float32 {
	m := s[0]
	for _, v := range s[1:] {
		m = max(m, v)
	}
	var sum float64
	for _, v := range s {
		sum += math.Exp(float64(v - m))
	}
	lse := m + float32(math.Log(sum))
	for i := range s {
		s[i] -= lse
	}
	return s
}

// Label returns the role of each sentence of one abstract, in order.
func (c *Classifier) Label(sentences []string) []Role {
	n := len(sentences)
	if n == 0 {
		return nil
	}
	emit := make([][numRoles]float32, n)
	for i, s := range sentences {
		emit[i] = c.scores(features(s, i, n))
	}
	return c.decode(emit)
}

// decode finds the likeliest sequence of roles (Viterbi) for the
// sentences' own scores and the weighted transitions.
func (c *Classifier) decode(emit [][numRoles]float32) []Role {
	n := len(emit)
	best := make([][numRoles]float32, n)
	from := make([][numRoles]Role, n)
	for r := range numRoles {
		best[0][r] = emit[0][r] + c.lambda*c.start[r]
	}
	for i := 1; i < n; i++ {
		for r := range numRoles {
			top, arg := float32(math.Inf(-1)), Role(0)
			for p := range numRoles {
				if v := best[i-1][p] + c.lambda*c.trans[p][r]; v > top {
					top, arg = v, p
				}
			}
			best[i][r], from[i][r] = top+emit[i][r], arg
		}
	}
	out := make([]Role, n)
	last := Role(0)
	for r := range numRoles {
		if best[n-1][r] > best[n-1][last] {
			last = r
		}
	}
	for i := n - 1; i >= 0; i-- {
		out[i] = last
		last = from[i][last]
	}
	return out
}
