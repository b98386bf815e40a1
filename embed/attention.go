package embed

import "unsafe"

// attend computes head hd's attention for the first rows tokens of a
// sequence of seq, from qkv (each token's queries, keys and values, 3·h
// wide), into ctx (rows h apart, dh wide): softmax(q·kᵀ·scale)·v. Its two
// products run in the arithmetic of p's kernels: bfloat16 (attendBF16)
// where the kernel set is a bf16 one, qkvb holds qkv rounded to bf16
// (attentionInput), dh is even and the sequence has at least
// attendBF16Tokens; else float32, each row of e^(scores − max) times v
// divided by its sum afterwards.
func (p *helper) attend(qkv []float32, qkvb []uint16, hd, dh, h, rows, seq int, scale float32, ctx []float32) {
	if p.gb.kern != nil && qkvb != nil && dh%2 == 0 && seq >= attendBF16Tokens {
		p.attendBF16(qkvb, hd, dh, h, rows, seq, scale, ctx)
		return
	}
	q, k, v := qkv[hd*dh:], qkv[h+hd*dh:], qkv[2*h+hd*dh:]
	p.kp = resize(p.kp, packedLen(dh, seq))
	if !packFloatKeysSIMD(p.kp, seq, dh, k, 3*h) {
		packNT(p.kp, seq, dh, k, 3*h)
	}
	// A question's attention in one pass, the same bits.
	if p.fmaSums && attendSmallSIMD(q, p.kp, v, dh, 3*h, rows, seq, scale, &p.scores, ctx, h) {
		return
	}
	p.scores = resize(p.scores, rows*seq)
	p.sums = resize(p.sums, rows)
	// scores = q·kᵀ, [rows, seq]
	p.g.mul(rows, seq, dh, q, 3*h, p.kp, p.scores, seq)
	for t := range rows {
		p.sums[t] = 1 / expShifted(p.scores[t*seq:(t+1)*seq], scale)
	}
	// ctx = scores·v, [rows, dh], each row then divided by its sum
	p.vp = resize(p.vp, packedLen(seq, dh))
	packNN(p.vp, seq, dh, v, 3*h)
	p.g.mul(rows, dh, seq, p.scores, seq, p.vp, ctx, h)
	scaleRows(ctx, h, ctx, h, p.sums, dh)
}

// attentionInput returns qkv rounded to bf16 into buf (grown) when k's
// attention runs in bf16, else nil: once a layer, for all its heads.
func attentionInput(k *kernels, qkv []float32, buf []uint16) []uint16 {
	if k.bf16 == nil {
		return nil
	}
	buf = resize(buf, len(qkv))
	roundBF16(buf, qkv)
	return buf
}

// attendBF16Tokens is the shortest sequence whose attention runs in
// bf16 on a bf16 kernel set; a shorter one's runs in float32. Below it
// the bf16 products' padding and rounding cost more than they save (one
// layer of 12 heads of 32 on an Intel Xeon with AMX: at 32 tokens 53 µs
// against float32's 42, at 64 even, at 128 259 against 329).
const attendBF16Tokens = 64

// attendSmallTokens is the longest sequence whose float32 attention
// goes in one pass where the CPU can (attendSmallSIMD): four panels of
// keys' scores in registers, a question's tokens with room to spare.
const attendSmallTokens = 64

// attendStepLen is what the second product's k (the tokens) is padded
// to: whole steps of the AMX kernel's 16 k pairs. The first's k is dh,
// whole steps for heads of 32 and 64; both products' columns are padded
// to whole panels, which every bf16 kernel takes.
const attendStepLen = 32

// attentionBF16Scheme names attendBF16's arithmetic in the embedding
// cache's keys; change it with that arithmetic: the exponentials by a
// polynomial of degree 4 (EXP4), rounded before the division by their
// sum. (Before it, "bf16": degree 6, the probabilities divided by their
// sum before they were rounded.)
const attentionBF16Scheme = "bf16:exp4-rounded"

// attendBF16 is attend with both products in bfloat16 (float32 sums),
// from qkv rounded to bf16: the queries are the first product's rows in
// place, the keys and values are packed into its panels, the
// exponentials of the scores are computed in float32 and rounded, and the
// context is divided by their sum (of the unrounded ones) afterwards, as
// attend's float32 path does.
// The keys' columns (one per token) and the values' (dh) are padded with
// zeros to whole panels, and the tokens the probabilities sum over to
// whole steps, so that on AMX every block goes through the tile unit.
func (p *helper) attendBF16(qkvb []uint16, hd, dh, h, rows, seq int, scale float32, ctx []float32) {
	ld := 3 * h
	q, k, v := qkvb[hd*dh:], qkvb[h+hd*dh:], qkvb[2*h+hd*dh:]
	// scores = q·kᵀ, [rows, ls]; columns past seq are zero.
	kp, ls := dh/2, roundUp(seq, bf16PanelWidth)
	p.kb = resize(p.kb, bf16PackedLen(dh, ls))
	packBF16Keys(p.kb, kp, seq, k, ld)
	p.scores = resize(p.scores, rows*ls)
	p.gb.mul(rows, ls, kp, q, ld, p.kb, p.scores, ls)
	// The exponentials in bf16, [rows, lk], rounded as they are computed;
	// tokens past seq are zero.
	lk := roundUp(seq, attendStepLen)
	p.pb = resize(p.pb, rows*lk)
	p.sums = resize(p.sums, rows)
	for t := range rows {
		p.sums[t] = 1 / expShiftedBF16(p.pb[t*lk:t*lk+seq], p.scores[t*ls:t*ls+seq], scale)
		clear(p.pb[t*lk+seq : (t+1)*lk])
	}
	// ctx = exponentials·v, [rows, n], its first dh columns divided by the
	// row's sum into ctx.
	n := roundUp(dh, bf16PanelWidth)
	p.vb = resize(p.vb, bf16PackedLen(lk, n))
	packBF16Values(p.vb, lk/2, seq, dh, v, ld)
	p.cb = resize(p.cb, rows*n)
	p.gb.mul(rows, n, lk/2, p.pb, lk, p.vb, p.cb, n)
	scaleRows(ctx, h, p.cb, n, p.sums, dh)
}

// packBF16Keys packs the keys of seq tokens (2·kp bf16 values each, rows
// ld apart, at an even place), as B = keysᵀ, into bf16 panels of kp pairs
// (gemm_bf16.go's layout, as many panels as fit in dst): a key's pair p is
// the dword of its column in the panel's row p, moved whole. Columns past
// seq are zero. Keys of 16 pairs go 16 at a time through AVX-512 where the
// CPU has it (packKeysSIMD), as a transpose.
func packBF16Keys(dst []uint16, kp, seq int, keys []uint16, ld int) {
	clear(dst)
	d, k := dwords(dst), dwords(keys[:(seq-1)*ld+2*kp])
	pl, ldd := kp*bf16PanelWidth, ld/2
	from := 0 // the first token not packed yet
	if packKeysSIMD(dst, kp, seq/16, keys, ld) {
		from = seq / 16 * 16
	}
	for j := from; j < seq; j++ {
		row := k[j*ldd : j*ldd+kp]
		col := d[j/bf16PanelWidth*pl+j%bf16PanelWidth:]
		for p, x := range row {
			col[p*bf16PanelWidth] = x
		}
	}
}

// packBF16Values packs B = values [seq, n] (bf16, rows ld apart) into
// bf16 panels of kp pairs (as many as fit in dst): tokens 2p and 2p+1's
// values j are the halves of column j's dword in its panel's row p. Pairs
// past seq and columns past n are zero. Whole pairs go through AVX-512 BW
// where the CPU has it and n is whole panels (packValuesSIMD).
func packBF16Values(dst []uint16, kp, seq, n int, values []uint16, ld int) {
	clear(dst)
	pl := 2 * kp * bf16PanelWidth
	from := 0 // the first token not packed yet
	if packValuesSIMD(dst, pl, seq/2, n, values, ld) {
		from = seq / 2 * 2
	}
	for t := from; t < seq; t += 2 {
		v0 := values[t*ld : t*ld+n]
		var v1 []uint16
		if t+1 < seq {
			v1 = values[(t+1)*ld : (t+1)*ld+n]
		}
		for c := 0; c < n; c += bf16PanelWidth {
			row := dst[c/bf16PanelWidth*pl+t*bf16PanelWidth:][:2*bf16PanelWidth]
			for j, x := range v0[c:min(c+bf16PanelWidth, n)] {
				row[2*j] = x
			}
			if v1 != nil {
				for j, x := range v1[c:min(c+bf16PanelWidth, n)] {
					row[2*j+1] = x
				}
			}
		}
	}
}

// dwords is b's pairs of bf16 values as dwords, to be moved whole (b's
// start 4-byte aligned: an even place in a []uint16 Go allocated).
func dwords(b []uint16) []uint32 {
	if len(b) < 2 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), len(b)/2)
}

// roundUp is n rounded up to a multiple of m.
func roundUp(n, m int) int { return (n + m - 1) / m * m }
