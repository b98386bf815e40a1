package embed

import (
	"encoding/json"
	"fmt"
	"math"
)

// bertConfig is the model configuration stored in the weight file's metadata.
type bertConfig struct {
	Name         string  `json:"name"`
	VocabSize    int     `json:"vocab_size"`
	Hidden       int     `json:"hidden_size"`
	Layers       int     `json:"num_hidden_layers"`
	Heads        int     `json:"num_attention_heads"`
	Intermediate int     `json:"intermediate_size"`
	MaxPositions int     `json:"max_position_embeddings"`
	LayerNormEps float64 `json:"layer_norm_eps"`
	HiddenAct    string  `json:"hidden_act"`
	MaxSeqLength int     `json:"max_seq_length"`
	Pooling      string  `json:"pooling"`
	Normalize    bool    `json:"normalize"`
	DoLowerCase  bool    `json:"do_lower_case"`
	License      string  `json:"license"`
	Source       string  `json:"source"`
}

type bertLayer struct {
	qkv      linear // query, key and value fused: out = 3·hidden
	attnOut  linear
	attnNorm layerNorm
	ffnIn    linear
	ffnOut   linear
	ffnNorm  layerNorm
}

// bert is a BERT encoder with its sentence pooling, loaded for inference.
type bert struct {
	cfg     bertConfig
	plan    plan      // the kernels of its products on this CPU
	choice  Choice    // its arithmetic and kernels, and why
	wordEmb wordTable // [vocab, hidden]: a text reads only its words' rows
	posEmb  []float32 // [maxPositions, hidden]
	typeEmb []float32 // [hidden], token type 0
	embNorm layerNorm
	layers  []bertLayer
}

// loadBERT loads the model from its weight file, its products on the
// kernels choosePlan picks for precision p (bfloat16 needs a CPU with a
// bf16 kernel; int8 runs the portable kernel where the CPU has no SIMD
// one), the feed-forward output layers kept out of int8 if exactFFNOut is
// set, from the rates given or, when there are none, those recorded in
// choiceFile for this machine or measured (see autoRates); a choice file
// that could not be used is reported by warn.
func loadBERT(weights []byte, p Precision, exactFFNOut bool, given *measurement, choiceFile string, warn func(error)) (*bert, error) {
	f, err := parseSafetensors(weights)
	if err != nil {
		return nil, err
	}
	var cfg bertConfig
	if err := json.Unmarshal([]byte(f.meta["config"]), &cfg); err != nil {
		return nil, fmt.Errorf("model config: %w", err)
	}
	if cfg.Hidden <= 0 || cfg.Heads <= 0 || cfg.Hidden%cfg.Heads != 0 || cfg.Layers <= 0 ||
		cfg.MaxSeqLength <= 2 || cfg.MaxSeqLength > cfg.MaxPositions || cfg.HiddenAct != "gelu" {
		return nil, fmt.Errorf("model config %+v is not a supported BERT", cfg)
	}
	m := &bert{cfg: cfg}
	if err := m.choose(p, exactFFNOut, given, choiceFile, warn); err != nil {
		return nil, err
	}
	h := cfg.Hidden
	var errs []error
	get := func(name string, shape ...int) []float32 {
		t, err := f.float32s(name, shape...)
		errs = append(errs, err)
		return t
	}
	raw := func(prefix string, out, in int) (tensor, []float32) {
		w, err := f.tensor(prefix+".weight", out, in)
		errs = append(errs, err)
		return w, get(prefix+".bias", out)
	}
	linAs := func(prefix string, out, in int, k *kernels) linear {
		w, b := raw(prefix, out, in)
		if b == nil {
			return linear{}
		}
		return newLinear(w, b, out, in, k)
	}
	lin := func(prefix string, out, in int) linear { return linAs(prefix, out, in, &m.plan.dense) }
	norm := func(prefix string) layerNorm {
		return layerNorm{gamma: get(prefix+".weight", h), beta: get(prefix+".bias", h)}
	}
	words, err := f.tensor("embeddings.word_embeddings.weight", cfg.VocabSize, h)
	errs = append(errs, err)
	m.wordEmb = newWordTable(words, h)
	m.posEmb = get("embeddings.position_embeddings.weight", cfg.MaxPositions, h)
	if t := get("embeddings.token_type_embeddings.weight", 2, h); t != nil {
		m.typeEmb = t[:h]
	}
	m.embNorm = norm("embeddings.LayerNorm")
	for i := 0; i < cfg.Layers; i++ {
		p := fmt.Sprintf("encoder.layer.%d.", i)
		qw, qb := raw(p+"attention.self.query", h, h)
		kw, kb := raw(p+"attention.self.key", h, h)
		vw, vb := raw(p+"attention.self.value", h, h)
		m.layers = append(m.layers, bertLayer{
			qkv:      newLinear(concatTensors(qw, kw, vw), concat(qb, kb, vb), 3*h, h, &m.plan.dense),
			attnOut:  lin(p+"attention.output.dense", h, h),
			attnNorm: norm(p + "attention.output.LayerNorm"),
			ffnIn:    lin(p+"intermediate.dense", cfg.Intermediate, h),
			ffnOut:   linAs(p+"output.dense", h, cfg.Intermediate, &m.plan.ffnOut),
			ffnNorm:  norm(p + "output.LayerNorm"),
		})
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

func concat[E any](parts ...[]E) []E {
	var out []E
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// concatTensors joins tensors' values, as halves if all hold halves.
func concatTensors(ts ...tensor) tensor {
	var hs [][]uint16
	for _, t := range ts {
		if t.h == nil {
			fs := make([][]float32, len(ts))
			for i, t := range ts {
				fs[i] = t.float32s()
			}
			return tensor{f: concat(fs...)}
		}
		hs = append(hs, t.h)
	}
	return tensor{h: concat(hs...)}
}

// scratch holds one worker's activations, reused across sequences.
type scratch struct {
	x, qkv, ctx, tmp, ffn []float32
	xb                    []uint16 // a dense layer's input in bfloat16
	qkvb                  []uint16 // qkv in bfloat16, where attention runs in it
	xq                    []byte   // a dense layer's input quantised to int8
	outl                  outlierScratch
	helper                // its own products
	// helpers are the ragged-edge scratch of the goroutines that share this
	// worker's dense layers when there are fewer texts than cores: with
	// len(helpers) = p - 1, every layer's output columns are split p ways.
	helpers []helper
	crew    *crew // runs the helpers' parts; nil without helpers
	// pause, for a background encode, waits while a foreground one runs;
	// nil for a foreground encode.
	pause func()
	// packed is the row ranges of the sequences being encoded together,
	// their products' rows (sequences); whole is the one range of a
	// product outside an encode.
	packed [][2]int
	whole  [1][2]int
}

// yield waits while a foreground encode runs, if this is a background one.
func (s *scratch) yield() {
	if s.pause != nil {
		s.pause()
	}
}

// yieldPanels is how many output panels of a dense layer a background
// encode computes between yields: about 1/12 of a feed-forward layer of
// bge-small, a couple of milliseconds of one core; a multiple of
// splitCols's groups, for the same reason as its parts.
const yieldPanels = 8

// yieldRows is how many tokens' GELU a background encode computes between
// yields, for the same reason.
const yieldRows = 32

// helper is the scratch of one goroutine sharing a layer: its products,
// the attention of its heads and the outlier share of its columns.
type helper struct {
	g              gemm
	gb             gemmBF16
	gi             gemmInt8
	scores, kp, vp []float32 // one head's scores, keys and values (packed)
	sums           []float32 // 1 over the sum of each row of its scores' exponentials
	kb, pb, vb     []uint16  // in bf16 attention: keys (packed), probabilities, values (packed)
	cb             []float32 // in bf16 attention: the context, its columns padded
	owp, oy        []float32 // outlier weights, packed, and their product
	fmaSums        bool      // g's kernels sum by FMA (kernels.fmaSums)
}

// split runs fn for parts 0 to parts-1 at once, part 0 on the calling
// goroutine and the others on s's crew (one after another without one),
// and returns when all are done.
func (s *scratch) split(parts int, fn func(i int)) {
	if s.crew == nil {
		for i := range parts {
			fn(i)
		}
		return
	}
	s.crew.run(parts, fn)
}

// minSplitPanels is the fewest output panels per goroutine worth a split.
const minSplitPanels = 4

func (s *scratch) grow(seq int, cfg bertConfig) {
	h := cfg.Hidden
	need := func(buf *[]float32, n int) {
		if cap(*buf) < n {
			*buf = make([]float32, n)
		}
		*buf = (*buf)[:n]
	}
	need(&s.x, seq*h)
	need(&s.qkv, seq*3*h)
	need(&s.ctx, seq*h)
	need(&s.tmp, seq*h)
	need(&s.ffn, seq*cfg.Intermediate)
}

// encode runs the encoder over the sequences packed one after another in
// its rows (their dense layers in one product each, attention within each
// sequence) and writes each one's pooled, L2-normalised vector into its
// out, and into its parts[i] the mean of the output vectors of the tokens
// in its spans[i], L2-normalised (left as it is for an empty span). Every
// step is computed row by row or within a sequence (an int8 product's
// outlier channels too), so a text's vector is the same alone or packed
// with others. A background encode waits for foreground work (s.pause)
// before each layer, each head, each slice of a dense layer's columns and
// each slice of its GELU's rows.
func (m *bert) encode(seqs []sequence, s *scratch) {
	cfg := m.cfg
	h := cfg.Hidden
	s.packed = s.packed[:0]
	spans, longest := false, 0
	for _, q := range seqs {
		longest = max(longest, len(q.ids))
		from := 0
		if n := len(s.packed); n > 0 {
			from = s.packed[n-1][1]
		}
		s.packed = append(s.packed, [2]int{from, from + len(q.ids)})
		spans = spans || len(q.spans) > 0
	}
	total := s.packed[len(s.packed)-1][1]
	s.grow(total, cfg)
	eps := float32(cfg.LayerNormEps)

	// Embeddings: word + position + token type, then layer norm.
	for i, q := range seqs {
		for t, id := range q.ids {
			row := s.x[(s.packed[i][0]+t)*h : (s.packed[i][0]+t+1)*h]
			m.wordEmb.row(int(id), row)
			p := m.posEmb[t*h : (t+1)*h]
			for j := range row {
				row[j] = row[j] + p[j] + m.typeEmb[j] // as (w + p) + t
			}
		}
	}
	m.wordEmb.giveBack()
	m.embNorm.apply(s.x, h, eps)

	heads := cfg.Heads
	dh := h / heads
	scale := float32(1 / math.Sqrt(float64(dh)))
	for li := range m.layers {
		s.yield()
		l := &m.layers[li]
		// The last layer of a CLS-pooled model with no spans to pool need
		// compute only each sequence's first token's output (the others'
		// keys and values still feed its attention), the first tokens
		// moved to the first rows, one a sequence.
		firsts := li == len(m.layers)-1 && cfg.Pooling == "cls" && !spans
		// Self-attention, its heads split between the parts.
		l.qkv.forward(s, s.x, total, s.qkv)
		var qkvb []uint16 // qkv in bf16, where a sequence attends in it
		if longest >= attendBF16Tokens {
			if qkvb = attentionInput(&m.plan.attention, s.qkv[:total*3*h], s.qkvb); qkvb != nil {
				s.qkvb = qkvb
			}
		}
		parts := min(1+len(s.helpers), heads)
		s.split(parts, func(i int) {
			p := s.part(i)
			p.use(&m.plan.attention)
			for hd := i * heads / parts; hd < (i+1)*heads/parts; hd++ {
				s.yield()
				for q, sq := range s.packed {
					from, seq := sq[0], sq[1]-sq[0]
					rows, at := seq, from
					if firsts {
						rows, at = 1, q
					}
					var seqb []uint16
					if qkvb != nil {
						seqb = qkvb[from*3*h:]
					}
					p.attend(s.qkv[from*3*h:], seqb, hd, dh, h, rows, seq, scale, s.ctx[at*h+hd*dh:])
				}
			}
		})
		rows := total
		if firsts {
			rows = len(seqs)
			for q, sq := range s.packed {
				copy(s.x[q*h:(q+1)*h], s.x[sq[0]*h:(sq[0]+1)*h])
				s.packed[q] = [2]int{q, q + 1}
			}
		}
		x := s.x[:rows*h]
		l.attnOut.mul(s, s.ctx, rows, s.tmp, false)
		l.attnNorm.residual(x, s.tmp, l.attnOut.b, eps)
		// Feed-forward.
		l.ffnIn.mul(s, x, rows, s.ffn, true)
		l.ffnOut.mul(s, s.ffn, rows, s.tmp, false)
		l.ffnNorm.residual(x, s.tmp, l.ffnOut.b, eps)
	}

	// Pooling over each sequence's tokens, then L2 norm.
	for q, seq := range seqs {
		from, to := s.packed[q][0], s.packed[q][1]
		if cfg.Pooling == "cls" {
			copy(seq.out, s.x[from*h:(from+1)*h])
		} else {
			meanRows(seq.out, s.x, h, from, to)
		}
		if cfg.Normalize {
			Normalize(seq.out)
		}
		for i, sp := range seq.spans {
			if sp[1] > sp[0] {
				meanRows(seq.parts[i], s.x, h, from+sp[0], from+sp[1])
				Normalize(seq.parts[i])
			}
		}
	}
	s.packed = s.packed[:0]
}

// part returns the products of part i of a split layer: s's own for 0,
// helper i-1's otherwise. Their kernels are set by the product (use).
func (s *scratch) part(i int) *helper {
	if i == 0 {
		return &s.helper
	}
	return &s.helpers[i-1]
}

// Normalize scales v in place to unit L2 length; a zero vector stays zero.
func Normalize(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range v {
		v[i] *= inv
	}
}
