package embed

// A dense layer, y = x·Wᵀ + b, in each arithmetic: its weights as they are
// kept, and its product split between a worker's goroutines.

// linear is a dense layer y = x·Wᵀ + b; W ([out, in] in the weight file)
// is kept packed for the matrix kernels: as the file stores it (IEEE half
// values, widened a panel at a time, or float32), or only in bfloat16 or
// only quantised to int8 when the layer runs in that arithmetic.
type linear struct {
	k       *kernels  // what its products run on; its arithmetic decides the packing
	wp      []float32 // Wᵀ packed by packNT, for float32 weights
	wh      []uint16  // Wᵀ packed by packNT, for half weights
	wb      []uint16  // Wᵀ packed by packBF16NT, for bfloat16
	wi      []byte    // Wᵀ quantised and packed by packInt8NT, for int8
	b       []float32
	in, out int
}

func newLinear(w tensor, b []float32, out, in int, k *kernels) linear {
	l := linear{k: k, b: b, in: in, out: out}
	switch arith := k.arith; {
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

// forward computes y = x·Wᵀ + b for seq rows of x.
func (l *linear) forward(s *scratch, x []float32, seq int, y []float32) {
	l.mul(s, x, seq, y, false)
	for t := 0; t < seq; t++ {
		add(y[t*l.out:(t+1)*l.out], l.b)
	}
}

// splitCols is the columns a dense product's parts are whole multiples
// of: the int8 AMX kernel's groups of four panels (the bf16 one takes
// whole panels), and a multiple of every panel width.
const splitCols = 64

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
			// Room for rows up to a whole block of 16, which the AMX
			// kernel reads past a ragged end rather than copy A.
			s.xb = make([]uint16, (seq+15)/16*16*2*kp)
		}
		s.xb = s.xb[:seq*2*kp]
		rowsToBF16(s.xb, x, seq, l.in, l.in)
	}
	if l.wi != nil {
		l.quantizeInput(s, x, seq)
	}
	panels := (l.out + width - 1) / width
	// Parts split at whole groups of splitCols columns, so that each
	// column goes to the same kernel (an AMX group, or the vector kernels
	// past the last) however many parts share the product: a text's
	// vector does not depend on how busy the machine is.
	unit := splitCols / width
	groups := (panels + unit - 1) / unit
	parts := max(1, min(1+len(s.helpers), panels/minSplitPanels, groups))
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
		j0, j1 := i*groups/parts*unit, min((i+1)*groups/parts*unit, panels)
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

// outlierScratch is the scratch of an int8 product's outlier channels,
// chosen for each sequence of a packed encode apart (scratch.sequences),
// so that a text's vector is the same whatever it was packed with. Each
// part's share of the product is in its helper.
type outlierScratch struct {
	peak  []float32 // each input channel's largest magnitude
	chans []int     // the outlier channels, sequence after sequence
	cuts  []int     // sequence i's channels are chans[cuts[i]:cuts[i+1]]
	a     []float32 // their columns of the input, sequence after sequence: [rows, channels] each
}

// resize returns buf with length n, reallocated only to grow.
func resize[E any](buf []E, n int) []E {
	if cap(buf) < n {
		return make([]E, n)
	}
	return buf[:n]
}

// quantizeInput quantises seq rows of x into s.xq for an int8 product,
// each sequence's outlier channels (found into s.outl) set to zero first:
// in x itself, row by row, their values kept in s.outl.a and put back once
// the row is quantised.
func (l *linear) quantizeInput(s *scratch, x []float32, seq int) {
	o := &s.outl
	o.peak = resize(o.peak, l.in)
	o.chans, o.cuts = o.chans[:0], append(o.cuts[:0], 0)
	for _, sq := range s.sequences(seq) {
		o.chans = outliers(o.chans, o.peak, x[sq[0]*l.in:sq[1]*l.in], sq[1]-sq[0], l.in)
		o.cuts = append(o.cuts, len(o.chans))
	}
	w := int8RowLen(l.in)
	s.xq = resize(s.xq, seq*w)
	o.a = o.a[:0]
	for i, sq := range s.sequences(seq) {
		chans := o.chans[o.cuts[i]:o.cuts[i+1]]
		for r := sq[0]; r < sq[1]; r++ {
			row := x[r*l.in : (r+1)*l.in]
			kept := len(o.a)
			for _, j := range chans {
				o.a = append(o.a, row[j])
				row[j] = 0
			}
			quantizeRow(s.xq[r*w:(r+1)*w], row)
			for n, j := range chans {
				row[j] = o.a[kept+n]
			}
		}
	}
}

// addOutliers adds to the output columns of panels j0 to j1 of y, with
// part i's scratch, the share of the product of the outlier channels
// quantizeInput left out of an int8 product: each sequence's float32
// inputs of them times their quantised weights. Other products have none.
func (l *linear) addOutliers(s *scratch, i, j0, j1, seq int, y []float32) {
	o := &s.outl
	if l.wi == nil || len(o.chans) == 0 {
		return
	}
	p := s.part(i)
	p.use(l.k)
	c0, c1 := j0*panelWidth, min(j1*panelWidth, l.out)
	n := c1 - c0
	a := o.a
	for q, sq := range s.sequences(seq) {
		chans := o.chans[o.cuts[q]:o.cuts[q+1]]
		c, rows := len(chans), sq[1]-sq[0]
		if c == 0 {
			continue
		}
		p.owp = resize(p.owp, packedLen(c, n))
		packInt8Columns(p.owp, l.wi[j0*int8PanelLen(l.in):], l.in, n, chans)
		if l.k.fusedOutliers && outlierProductSIMD(y[sq[0]*l.out+c0:], l.out, a[:rows*c], c, p.owp, n, rows) {
			a = a[rows*c:]
			continue
		}
		p.oy = resize(p.oy, rows*n)
		p.g.mul(rows, n, c, a, c, p.owp, p.oy, n)
		a = a[rows*c:]
		for r := range rows {
			add(y[(sq[0]+r)*l.out+c0:(sq[0]+r)*l.out+c1], p.oy[r*n:(r+1)*n])
		}
	}
}

// mulPanels computes the output columns of panels j0 to j1 of y = x·Wᵀ
// (x already in s.xb for bfloat16, quantised in s.xq for int8) with part
// i's scratch: s's own for 0,
// helper i-1's otherwise.
func (l *linear) mulPanels(s *scratch, i, j0, j1 int, x []float32, seq int, y []float32) {
	p := s.part(i)
	p.use(l.k)
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
