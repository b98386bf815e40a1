package embed

import "unsafe"

// packBF16ValuesAVX512 packs whole pairs of tokens' values into whole
// panels (attention_amd64.s).
//
//go:noescape
func packBF16ValuesAVX512(dst *uint16, pl, pairs, n int, values *uint16, ld int)

// packValuesSIMD packs the first pairs pairs of tokens' values (n a token)
// as packBF16Values does, with AVX-512, and reports whether it did: for
// panels of 32 values (n a multiple of 32), on a CPU with AVX-512 BW.
func packValuesSIMD(dst []uint16, pl, pairs, n int, values []uint16, ld int) bool {
	if !hasBF16 || pairs == 0 || n == 0 || n%32 != 0 || bf16PanelWidth != 32 {
		return false
	}
	_ = dst[(n/32-1)*pl+(pairs-1)*64+63]
	_ = values[(2*pairs-1)*ld+n-1]
	packBF16ValuesAVX512(&dst[0], pl, pairs, n, &values[0], ld)
	return true
}

// transposeDwordsAVX512 transposes a 16×16 block of dwords: src's row i
// (rows ls bytes apart) to column i of dst's rows (rs bytes apart)
// (attention_amd64.s).
//
//go:noescape
func transposeDwordsAVX512(dst *uint32, rs int, src *uint32, ls int)

// packKeysSIMD packs the first groups·16 tokens' keys as packBF16Keys
// does, with AVX-512, and reports whether it did: for keys of 16 pairs
// (heads of 32) into panels of 32 columns, a 16×16 transpose of dwords a
// group.
func packKeysSIMD(dst []uint16, kp, groups int, keys []uint16, ld int) bool {
	if !hasAVX512 || kp != 16 || groups == 0 || bf16PanelWidth != 32 {
		return false
	}
	pl := 2 * kp * bf16PanelWidth // values a panel
	g := groups - 1
	d := dwords(dst[:g/2*pl+15*2*bf16PanelWidth+g%2*32+32])
	k := dwords(keys[:(16*groups-1)*ld+32])
	for g := range groups {
		// Group g is columns 16·(g mod 2) on of panel g/2.
		transposeDwordsAVX512(&d[(g/2*pl+g%2*32)/2], 4*bf16PanelWidth, &k[g*16*ld/2], 2*ld)
	}
	return true
}

// packFloatKeysSIMD packs the keys of seq tokens (dh float32 values each,
// rows ld apart) as packNT does, with AVX-512, and reports whether it
// did: for dh a multiple of 16, a 16×16 transpose of dwords for every 16
// tokens' 16 values, the last tokens' block padded with zeros first.
func packFloatKeysSIMD(dst []float32, seq, dh int, keys []float32, ld int) bool {
	if !hasAVX512 || dh%16 != 0 || seq == 0 || dh == 0 {
		return false
	}
	_, _ = dst[packedLen(dh, seq)-1], keys[(seq-1)*ld+dh-1]
	var tail [panelWidth * 16]float32
	for j := 0; j*panelWidth < seq; j++ {
		rows := min(panelWidth, seq-j*panelWidth)
		for b := 0; b < dh; b += 16 {
			src, ls := &keys[j*panelWidth*ld+b], 4*ld
			if rows < panelWidth {
				for r := range panelWidth {
					row := tail[r*16 : (r+1)*16]
					if r < rows {
						copy(row, keys[(j*panelWidth+r)*ld+b:])
					} else {
						clear(row)
					}
				}
				src, ls = &tail[0], 64
			}
			transposeDwordsAVX512((*uint32)(unsafe.Pointer(&dst[(j*dh+b)*panelWidth])), 4*panelWidth,
				(*uint32)(unsafe.Pointer(src)), ls)
		}
	}
	return true
}
