package roles

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
)

// Abstract is one labelled abstract: its sentences and their roles.
type Abstract struct {
	Sentences []string
	Roles     []Role
}

// ReadCSAbstruct reads a CSAbstruct split: one JSON object per line with
// "sentences" and "labels".
func ReadCSAbstruct(r io.Reader) ([]Abstract, error) {
	var out []Abstract
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	for line := 1; sc.Scan(); line++ {
		var rec struct {
			Sentences []string `json:"sentences"`
			Labels    []string `json:"labels"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if len(rec.Sentences) != len(rec.Labels) {
			return nil, fmt.Errorf("line %d: %d sentences, %d labels", line, len(rec.Sentences), len(rec.Labels))
		}
		a := Abstract{Sentences: rec.Sentences, Roles: make([]Role, len(rec.Labels))}
		for i, l := range rec.Labels {
			var err error
			if a.Roles[i], err = Parse(l); err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
		}
		out = append(out, a)
	}
	return out, sc.Err()
}

// TrainOptions shape training; zero values take the defaults.
type TrainOptions struct {
	Epochs int     // passes over the training set (default 5)
	Rate   float64 // AdaGrad's learning rate (default 0.05)
	L2     float64 // weight decay per update (default 1e-6)
	Seed   uint64
}

// Train fits the classifier to train: the sentence weights by stochastic
// gradient descent on the log-loss (AdaGrad), the role transitions by
// counting, and their weight lambda by accuracy on dev.
func Train(train, dev []Abstract, opts TrainOptions) *Classifier {
	if opts.Epochs == 0 {
		opts.Epochs = 5
	}
	if opts.Rate == 0 {
		opts.Rate = 0.05
	}
	if opts.L2 == 0 {
		opts.L2 = 1e-6
	}
	type example struct {
		feats []int
		role  Role
	}
	var examples []example
	c := new(Classifier)
	var startN [numRoles]float64
	var transN [numRoles][numRoles]float64
	for _, a := range train {
		for i, s := range a.Sentences {
			examples = append(examples, example{features(s, i, len(a.Sentences)), a.Roles[i]})
			if i == 0 {
				startN[a.Roles[i]]++
			} else {
				transN[a.Roles[i-1]][a.Roles[i]]++
			}
		}
	}
	for r := range numRoles {
		c.w[r] = make([]float32, numFeatures)
	}
	var g2 [numRoles][]float64 // AdaGrad's sums of squared gradients
	for r := range numRoles {
		g2[r] = make([]float64, numFeatures)
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 1))
	for range opts.Epochs {
		rng.Shuffle(len(examples), func(i, j int) { examples[i], examples[j] = examples[j], examples[i] })
		for _, ex := range examples {
			p := c.scores(ex.feats)
			for r := range numRoles {
				g := math.Exp(float64(p[r]))
				if r == ex.role {
					g--
				}
				for _, f := range ex.feats {
					w := float64(c.w[r][f])
					grad := g + opts.L2*w
					g2[r][f] += grad * grad
					c.w[r][f] = float32(w - opts.Rate*grad/math.Sqrt(g2[r][f]+1e-8))
				}
			}
		}
	}
	// Transitions with add-one smoothing.
	var startSum float64
	for _, v := range startN {
		startSum += v + 1
	}
	for r := range numRoles {
		c.start[r] = float32(math.Log((startN[r] + 1) / startSum))
		var sum float64
		for _, v := range transN[r] {
			sum += v + 1
		}
		for q := range numRoles {
			c.trans[r][q] = float32(math.Log((transN[r][q] + 1) / sum))
		}
	}
	best, bestAcc := float32(0), -1.0
	for _, lambda := range []float32{0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3} {
		c.lambda = lambda
		if acc := Evaluate(c, dev).Accuracy; acc > bestAcc {
			best, bestAcc = lambda, acc
		}
	}
	c.lambda = best
	return c
}

// Report is how well a classifier labels a set of abstracts.
type Report struct {
	Sentences int
	Accuracy  float64 // = micro-averaged F1, one role per sentence
	F1        [numRoles]float64
	MacroF1   float64 // over the roles present
	// Confusion counts sentences by true role (row) and labelled role.
	Confusion [numRoles][numRoles]int
}

// Evaluate labels each abstract and compares with its roles.
func Evaluate(c *Classifier, set []Abstract) Report {
	var rep Report
	correct := 0
	for _, a := range set {
		for i, r := range c.Label(a.Sentences) {
			rep.Confusion[a.Roles[i]][r]++
			rep.Sentences++
			if r == a.Roles[i] {
				correct++
			}
		}
	}
	if rep.Sentences == 0 {
		return rep
	}
	rep.Accuracy = float64(correct) / float64(rep.Sentences)
	present := 0
	for r := range numRoles {
		tp := rep.Confusion[r][r]
		var labelled, truth int
		for q := range numRoles {
			labelled += rep.Confusion[q][r]
			truth += rep.Confusion[r][q]
		}
		if truth == 0 {
			continue
		}
		present++
		if tp > 0 {
			prec, rec := float64(tp)/float64(labelled), float64(tp)/float64(truth)
			rep.F1[r] = 2 * prec * rec / (prec + rec)
		}
		rep.MacroF1 += rep.F1[r]
	}
	rep.MacroF1 /= float64(present)
	return rep
}

// weightsMagic opens the weights file; the version follows it.
const weightsMagic = "papersearch-roles-1"

// MarshalBinary encodes the classifier: the magic, the feature count, lambda,
// start, transitions and weights, little-endian float32.
func (c *Classifier) MarshalBinary() ([]byte, error) {
	out := []byte(weightsMagic)
	out = binary.LittleEndian.AppendUint32(out, numFeatures)
	put := func(v float32) { out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v)) }
	put(c.lambda)
	for r := range numRoles {
		put(c.start[r])
	}
	for r := range numRoles {
		for q := range numRoles {
			put(c.trans[r][q])
		}
	}
	for r := range numRoles {
		for _, v := range c.w[r] {
			put(v)
		}
	}
	return out, nil
}

// UnmarshalBinary decodes what MarshalBinary encoded.
func (c *Classifier) UnmarshalBinary(b []byte) error {
	want := len(weightsMagic) + 4 + 4*(1+int(numRoles)+int(numRoles*numRoles)+int(numRoles)*numFeatures)
	if len(b) != want || string(b[:len(weightsMagic)]) != weightsMagic {
		return errors.New("the weights are not this build's (run go generate ./search/roles)")
	}
	b = b[len(weightsMagic):]
	if binary.LittleEndian.Uint32(b) != numFeatures {
		return errors.New("the weights have another feature count (run go generate ./search/roles)")
	}
	b = b[4:]
	get := func() float32 {
		v := math.Float32frombits(binary.LittleEndian.Uint32(b))
		b = b[4:]
		return v
	}
	c.lambda = get()
	for r := range numRoles {
		c.start[r] = get()
	}
	for r := range numRoles {
		for q := range numRoles {
			c.trans[r][q] = get()
		}
	}
	for r := range numRoles {
		c.w[r] = make([]float32, numFeatures)
		for i := range c.w[r] {
			c.w[r][i] = get()
		}
	}
	return nil
}
