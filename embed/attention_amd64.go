package embed

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

// packBF16KeysAVX512 packs groups of 16 tokens' keys of 16 dword pairs
// (attention_amd64.s); pl and ld in bytes.
//
//go:noescape
func packBF16KeysAVX512(dst *uint16, pl, groups int, keys *uint16, ld int)

// packKeysSIMD packs the first groups·16 tokens' keys as packBF16Keys
// does, with AVX-512, and reports whether it did: for keys of 16 pairs
// (heads of 32) into panels of 32 columns.
func packKeysSIMD(dst []uint16, kp, groups int, keys []uint16, ld int) bool {
	if !hasAVX512 || kp != 16 || groups == 0 || bf16PanelWidth != 32 {
		return false
	}
	pl := 2 * kp * bf16PanelWidth // values a panel
	g := groups - 1
	_ = dst[g/2*pl+15*2*bf16PanelWidth+g%2*32+31]
	_ = keys[(16*groups-1)*ld+31]
	packBF16KeysAVX512(&dst[0], 2*pl, groups, &keys[0], 2*ld)
	return true
}
