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

// linear is a dense layer y = x·Wᵀ + b; W ([out, in] in the weight file)
// is kept packed for the matrix kernels: as the file stores it (IEEE half
// values, widened a panel at a time, or float32), or only in bfloat16 or
// only quantised to int8 when the layer runs in that arithmetic.
type linear struct {
	wp      []float32 // Wᵀ packed by packNT, for float32 weights
	wh      []uint16  // Wᵀ packed by packNT, for half weights
	wb      []uint16  // Wᵀ packed by packBF16NT, for bfloat16
	wi      []byte    // Wᵀ quantised and packed by packInt8NT, for int8
	b       []float32
	in, out int
}

func newLinear(w tensor, b []float32, out, in int, arith arithmetic) linear {
	l := linear{b: b, in: in, out: out}
	switch {
	case arith == arithBF16:
		l.wb = make([]uint16, bf16PackedLen(in, out))
		packBF16NT(l.wb, out, in, w.float32s())
	case arith == arithInt8:
		l.wi = make([]byte, int8PackedLen(in, out))
		packInt8NT(l.wi, out, in, w.float32s())
	case w.h != nil:
		l.wh = make([]uint16, packedLen(in, out))
		packNT(l.wh, out, in, w.h, in)
	default:
		l.wp = make([]float32, packedLen(in, out))
		packNT(l.wp, out, in, w.f, in)
	}
	return l
}

type layerNorm struct{ gamma, beta []float32 }

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
	k       kernels   // the micro-kernels of its arithmetic on this CPU
	choice  Choice    // its arithmetic and kernel, and why
	wordEmb []float32 // [vocab, hidden]
	posEmb  []float32 // [maxPositions, hidden]
	typeEmb []float32 // [hidden], token type 0
	embNorm layerNorm
	layers  []bertLayer
}

// loadBERT loads the model from its weight file, its dense layers in the
// precision given (bfloat16 needs a CPU with a bf16 kernel; int8 runs the
// portable kernel where the CPU has no SIMD one), the feed-forward output
// layers in float32 under int8 if floatFFNOut is set.
func loadBERT(weights []byte, p Precision, floatFFNOut bool) (*bert, error) {
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
	var measured map[Precision]float64
	arith, ok := arithmeticOf(p)
	switch {
	case p == "" || p == PrecisionAuto:
		arith, measured = chooseArithmetic(cfg.Hidden, cfg.Intermediate)
	case !ok:
		return nil, fmt.Errorf("precision %q: want auto, fp32, bf16 or int8", string(p))
	}
	if m.k, err = kernelsFor(arith); err != nil {
		return nil, err
	}
	m.choice = Choice{Precision: arith.precision(), Kernel: m.k.name, Measured: measured,
		FloatFFNOut: arith == arithInt8 && floatFFNOut}
	ffnOutArith := arith
	if m.choice.FloatFFNOut {
		ffnOutArith = arithFP32
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
	linAs := func(prefix string, out, in int, a arithmetic) linear {
		w, b := raw(prefix, out, in)
		if b == nil {
			return linear{}
		}
		return newLinear(w, b, out, in, a)
	}
	lin := func(prefix string, out, in int) linear { return linAs(prefix, out, in, arith) }
	norm := func(prefix string) layerNorm {
		return layerNorm{gamma: get(prefix+".weight", h), beta: get(prefix+".bias", h)}
	}
	m.wordEmb = get("embeddings.word_embeddings.weight", cfg.VocabSize, h)
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
			qkv:      newLinear(concatTensors(qw, kw, vw), concat(qb, kb, vb), 3*h, h, arith),
			attnOut:  lin(p+"attention.output.dense", h, h),
			attnNorm: norm(p + "attention.output.LayerNorm"),
			ffnIn:    lin(p+"intermediate.dense", cfg.Intermediate, h),
			ffnOut:   linAs(p+"output.dense", h, cfg.Intermediate, ffnOutArith),
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
}

// yield waits while a foreground encode runs, if this is a background one.
func (s *scratch) yield() {
	if s.pause != nil {
		s.pause()
	}
}

// yieldPanels is how many output panels of a dense layer a background
// encode computes between yields: about 1/12 of a feed-forward layer of
// bge-small, a couple of milliseconds of one core.
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
	owp, oy        []float32 // outlier weights, packed, and their product
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

// encode runs the encoder over one sequence of token ids and writes the
// pooled, L2-normalised sentence vector into out (length hidden), and into
// parts[i] the mean of the output vectors of the tokens in spans[i],
// L2-normalised (left as it is for an empty span). A background encode
// waits for foreground work (s.pause) before each layer, each head, each
// slice of a dense layer's columns and each slice of its GELU's rows.
func (m *bert) encode(ids []int32, s *scratch, out []float32, spans [][2]int, parts [][]float32) {
	cfg := m.cfg
	h, seq := cfg.Hidden, len(ids)
	s.grow(seq, cfg)
	s.g.kern, s.gb.kern, s.gi.kern = m.k.f32, m.k.bf16, m.k.int8
	eps := float32(cfg.LayerNormEps)

	// Embeddings: word + position + token type, then layer norm.
	for t, id := range ids {
		row := s.x[t*h : (t+1)*h]
		w := m.wordEmb[int(id)*h : (int(id)+1)*h]
		p := m.posEmb[t*h : (t+1)*h]
		for j := range row {
			row[j] = w[j] + p[j] + m.typeEmb[j]
		}
	}
	m.embNorm.apply(s.x, h, eps)

	heads := cfg.Heads
	dh := h / heads
	scale := float32(1 / math.Sqrt(float64(dh)))
	for li := range m.layers {
		s.yield()
		l := &m.layers[li]
		// rows is how many tokens' outputs this layer must compute: all of
		// them, except in the last layer of a CLS-pooled model with no
		// spans to pool, whose only output used is the first token's (the
		// others' keys and values still feed its attention).
		rows := seq
		if li == len(m.layers)-1 && cfg.Pooling == "cls" && len(spans) == 0 {
			rows = 1
		}
		// Self-attention, its heads split between the parts.
		l.qkv.forward(s, s.x, seq, s.qkv)
		parts := min(1+len(s.helpers), heads)
		s.split(parts, func(i int) {
			p := s.part(i)
			p.scores = resize(p.scores, seq*seq)
			p.kp = resize(p.kp, packedLen(dh, seq))
			p.vp = resize(p.vp, packedLen(seq, dh))
			for hd := i * heads / parts; hd < (i+1)*heads/parts; hd++ {
				s.yield()
				q := s.qkv[hd*dh:]
				k := s.qkv[h+hd*dh:]
				v := s.qkv[2*h+hd*dh:]
				// scores = q·kᵀ, [rows, seq]
				packNT(p.kp, seq, dh, k, 3*h)
				p.g.mul(rows, seq, dh, q, 3*h, p.kp, p.scores, seq)
				for t := 0; t < rows; t++ {
					softmaxScaled(p.scores[t*seq:(t+1)*seq], scale)
				}
				// ctx_h = scores·v, [rows, dh], written into its columns of ctx.
				packNN(p.vp, seq, dh, v, 3*h)
				p.g.mul(rows, dh, seq, p.scores, seq, p.vp, s.ctx[hd*dh:], h)
			}
		})
		x := s.x[:rows*h]
		l.attnOut.mul(s, s.ctx, rows, s.tmp, false)
		l.attnNorm.residual(x, s.tmp, l.attnOut.b, eps)
		// Feed-forward.
		l.ffnIn.mul(s, x, rows, s.ffn, true)
		l.ffnOut.mul(s, s.ffn, rows, s.tmp, false)
		l.ffnNorm.residual(x, s.tmp, l.ffnOut.b, eps)
	}

	// Pooling over all tokens (one sequence, no padding), then L2 norm.
	if cfg.Pooling == "cls" {
		copy(out, s.x[:h])
	} else {
		meanRows(out, s.x, h, 0, seq)
	}
	if cfg.Normalize {
		Normalize(out)
	}
	for i, sp := range spans {
		if sp[1] > sp[0] {
			meanRows(parts[i], s.x, h, sp[0], sp[1])
			Normalize(parts[i])
		}
	}
}

// meanRows writes into out the mean of rows from to to (exclusive) of x,
// whose rows are h wide.
func meanRows(out, x []float32, h, from, to int) {
	clear(out)
	for t := from; t < to; t++ {
		add(out, x[t*h:(t+1)*h])
	}
	inv := 1 / float32(to-from)
	for j := range out {
		out[j] *= inv
	}
}

// forward computes y = x·Wᵀ + b for seq rows of x.
func (l *linear) forward(s *scratch, x []float32, seq int, y []float32) {
	l.mul(s, x, seq, y, false)
	for t := 0; t < seq; t++ {
		add(y[t*l.out:(t+1)*l.out], l.b)
	}
}

// mul computes y = x·Wᵀ, without the bias, for seq rows of x, or
// gelu(x·Wᵀ + b) if gelu is set, its output columns split between s's own
// gemm and its helpers' goroutines (each part adds its columns' outlier
// share and applies their GELU). A background encode with no helpers
// yields every yieldPanels panels and every yieldRows rows of GELU.
func (l *linear) mul(s *scratch, x []float32, seq int, y []float32, gelu bool) {
	width := panelWidth
	if l.wb != nil {
		width = bf16PanelWidth
		kp := bf16Pairs(l.in)
		if cap(s.xb) < seq*2*kp {
			s.xb = make([]uint16, seq*2*kp)
		}
		s.xb = s.xb[:seq*2*kp]
		rowsToBF16(s.xb, x, seq, l.in, l.in)
	}
	if l.wi != nil {
		l.quantizeInput(s, x, seq)
	}
	panels := (l.out + width - 1) / width
	parts := max(1, min(1+len(s.helpers), panels/minSplitPanels))
	if parts == 1 && s.pause != nil {
		for j := 0; j < panels; j += yieldPanels {
			s.pause()
			l.mulPanels(s, 0, j, min(j+yieldPanels, panels), x, seq, y)
		}
		l.addOutliers(s, 0, 0, panels, seq, y)
		for r := 0; r < seq && gelu; r += yieldRows {
			s.pause()
			biasGELU(y[r*l.out:min(r+yieldRows, seq)*l.out], l.b)
		}
		return
	}
	s.split(parts, func(i int) {
		j0, j1 := i*panels/parts, (i+1)*panels/parts
		l.mulPanels(s, i, j0, j1, x, seq, y)
		l.addOutliers(s, i, j0, j1, seq, y)
		if !gelu {
			return
		}
		c0, c1 := j0*width, min(j1*width, l.out)
		for r := range seq {
			biasGELU(y[r*l.out+c0:r*l.out+c1], l.b[c0:c1])
		}
	})
}

// outlierScratch is the scratch of an int8 product's outlier channels.
// Each part's share of the product is in its helper.
type outlierScratch struct {
	peak  []float32 // each input channel's largest magnitude
	chans []int     // the outlier channels
	x     []float32 // the input without them
	a     []float32 // their columns of the input, [rows, len(chans)]
}

// resize returns buf with length n, reallocated only to grow.
func resize[E any](buf []E, n int) []E {
	if cap(buf) < n {
		return make([]E, n)
	}
	return buf[:n]
}

// quantizeInput quantises seq rows of x into s.xq for an int8 product,
// its outlier channels (found into s.outl.chans) set to zero first.
func (l *linear) quantizeInput(s *scratch, x []float32, seq int) {
	o := &s.outl
	o.peak = resize(o.peak, l.in)
	o.chans = outliers(o.chans, o.peak, x[:seq*l.in], seq, l.in)
	src := x
	if c := len(o.chans); c > 0 {
		o.a = resize(o.a, seq*c)
		for r := range seq {
			for i, j := range o.chans {
				o.a[r*c+i] = x[r*l.in+j]
			}
		}
		o.x = resize(o.x, seq*l.in)
		copy(o.x, x[:seq*l.in])
		for r := range seq {
			for _, j := range o.chans {
				o.x[r*l.in+j] = 0
			}
		}
		src = o.x
	}
	s.xq = resize(s.xq, seq*int8RowLen(l.in))
	quantizeRows(s.xq, src, seq, l.in, l.in)
}

// addOutliers adds to the output columns of panels j0 to j1 of y, with
// part i's scratch, the share of the product of the outlier channels
// quantizeInput left out of an int8 product: their float32 inputs times
// their quantised weights. Other products have none.
func (l *linear) addOutliers(s *scratch, i, j0, j1, seq int, y []float32) {
	o := &s.outl
	c := len(o.chans)
	if l.wi == nil || c == 0 {
		return
	}
	p := s.part(i)
	c0, c1 := j0*panelWidth, min(j1*panelWidth, l.out)
	n := c1 - c0
	p.owp = resize(p.owp, packedLen(c, n))
	packInt8Columns(p.owp, l.wi[j0*int8PanelLen(l.in):], l.in, n, o.chans)
	p.oy = resize(p.oy, seq*n)
	p.g.mul(seq, n, c, o.a, c, p.owp, p.oy, n)
	for r := range seq {
		add(y[r*l.out+c0:r*l.out+c1], p.oy[r*n:(r+1)*n])
	}
}

// mulPanels computes the output columns of panels j0 to j1 of y = x·Wᵀ
// (x already in s.xb for bfloat16, quantised in s.xq for int8) with part
// i's scratch: s's own for 0,
// helper i-1's otherwise.
func (l *linear) mulPanels(s *scratch, i, j0, j1 int, x []float32, seq int, y []float32) {
	p := s.part(i)
	if l.wb != nil {
		kp := bf16Pairs(l.in)
		c0, c1 := j0*bf16PanelWidth, min(j1*bf16PanelWidth, l.out)
		p.gb.mul(seq, c1-c0, kp, s.xb, 2*kp, l.wb[j0*kp*2*bf16PanelWidth:], y[c0:], l.out)
		return
	}
	c0, c1 := j0*panelWidth, min(j1*panelWidth, l.out)
	switch {
	case l.wi != nil:
		p.gi.mul(seq, c1-c0, l.in, s.xq, int8RowLen(l.in), l.wi[j0*int8PanelLen(l.in):], y[c0:], l.out)
	case l.wh != nil:
		p.g.mulHalf(seq, c1-c0, l.in, x, l.in, l.wh[j0*l.in*panelWidth:], y[c0:], l.out)
	default:
		p.g.mul(seq, c1-c0, l.in, x, l.in, l.wp[j0*l.in*panelWidth:], y[c0:], l.out)
	}
}

// part returns the products of part i of a split dense layer: s's own for
// 0, helper i-1's, given s's kernels, otherwise.
func (s *scratch) part(i int) *helper {
	if i == 0 {
		return &s.helper
	}
	h := &s.helpers[i-1]
	h.g.kern, h.gb.kern, h.gi.kern = s.g.kern, s.gb.kern, s.gi.kern
	return h
}

// residual sets each row of x (width len(b)) to the normalised x + y + b:
// a dense layer's bias, the residual connection and the layer norm in one
// pass.
func (n layerNorm) residual(x, y, b []float32, eps float32) {
	h := len(b)
	for off := 0; off+h <= len(x); off += h {
		row, yr := x[off:off+h], y[off:off+h]
		if residualNormSIMD(row, yr, b, n.gamma, n.beta, eps) {
			continue
		}
		for j := range row {
			row[j] += yr[j] + b[j]
		}
		n.apply(row, h, eps)
	}
}

// apply normalises each row of x (width h) in place.
func (n layerNorm) apply(x []float32, h int, eps float32) {
	for off := 0; off+h <= len(x); off += h {
		row := x[off : off+h]
		var mean float32
		for _, v := range row {
			mean += v
		}
		mean /= float32(h)
		var variance float32
		for _, v := range row {
			d := v - mean
			variance += d * d
		}
		variance /= float32(h)
		inv := float32(1 / math.Sqrt(float64(variance+eps)))
		for j, v := range row {
			row[j] = (v-mean)*inv*n.gamma[j] + n.beta[j]
		}
	}
}

// add adds src to dst element-wise, with SIMD where the CPU has it.
func add(dst, src []float32) {
	if addSIMD(dst, src) {
		return
	}
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += src[i]
	}
}

// softmaxScaled replaces row by softmax(scale·row), with SIMD where the
// CPU has it.
func softmaxScaled(row []float32, scale float32) {
	if !softmaxSIMD(row, scale) {
		softmaxGo(row, scale)
	}
}

// softmaxGo is softmaxScaled in Go, and the reference for the SIMD one.
func softmaxGo(row []float32, scale float32) {
	maxv := float32(math.Inf(-1))
	for _, v := range row {
		maxv = max(maxv, v)
	}
	var sum float32
	for i, v := range row {
		e := expf((v - maxv) * scale)
		row[i] = e
		sum += e
	}
	inv := 1 / sum
	for i := range row {
		row[i] *= inv
	}
}

// biasGELU adds b to each row of x (width len(b)) and applies the erf
// GELU, in place, with SIMD where the CPU has it.
func biasGELU(x, b []float32) {
	for off := 0; off+len(b) <= len(x); off += len(b) {
		row := x[off : off+len(b)]
		if !biasGELUSIMD(row, b) {
			add(row, b)
			geluGo(row)
		}
	}
}

// geluGo is gelu in Go, and the reference for the SIMD one.
func geluGo(x []float32) {
	for i, v := range x {
		x[i] = 0.5 * v * (1 + erff(v*(1/math.Sqrt2)))
	}
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
