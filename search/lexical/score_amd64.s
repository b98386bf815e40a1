#include "textflag.h"

// func scoreAVX512(ps *posting, n int, norms *float32, scores *float32, w float32, touched *int32) int
//
// Score's loop over n postings (n a positive multiple of 16) of one term
// whose weight times k1+1 is w, 16 at a time: each posting's row's
// normalisation is gathered from norms, and, where it is not negative (a
// live row), its score from scores; a live row whose score is 0 is
// appended to touched (in the postings' order); its score gains
// w·tf/(tf + norm), each operation rounded to float32 as Go rounds it, and
// is scattered back. A term's postings are of distinct rows, so no two of
// 16 collide. Returns how many rows were appended.
TEXT ·scoreAVX512(SB), NOSPLIT, $0-56
	MOVQ         ps+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVQ         norms+16(FP), R8
	MOVQ         scores+24(FP), R9
	VBROADCASTSS w+32(FP), Z31
	MOVQ         touched+40(FP), DI
	MOVQ         DI, R10
	VPXORD       Z30, Z30, Z30

loop:
	VMOVDQU64     (SI), Z0
	VMOVDQU64     64(SI), Z1
	VPMOVQD       Z0, Y2 // rows: each posting's low half
	VPMOVQD       Z1, Y3
	VINSERTI64X4  $1, Y3, Z2, Z2
	VPSRLQ        $32, Z0, Z0 // term frequencies: the high halves
	VPSRLQ        $32, Z1, Z1
	VPMOVQD       Z0, Y4
	VPMOVQD       Z1, Y5
	VINSERTI64X4  $1, Y5, Z4, Z4
	KXNORW        K1, K1, K1
	VGATHERDPS    (R8)(Z2*4), K1, Z6 // norms
	VCMPPS        $13, Z30, Z6, K2   // live: norm ≥ 0
	KMOVW         K2, K3
	VPXORD        Z7, Z7, Z7
	VGATHERDPS    (R9)(Z2*4), K3, Z7 // scores of the live rows
	VCMPPS        $0, Z30, Z7, K2, K4 // live and not yet scored
	VPCOMPRESSD   Z2, K4, (DI)
	KMOVW         K4, AX
	POPCNTL       AX, AX
	LEAQ          (DI)(AX*4), DI
	VCVTDQ2PS     Z4, Z4
	VMULPS        Z4, Z31, Z8  // w·tf
	VADDPS        Z6, Z4, Z9   // tf + norm
	VDIVPS        Z9, Z8, Z10  // w·tf / (tf + norm)
	VADDPS        Z10, Z7, Z7
	KMOVW         K2, K5
	VSCATTERDPS   Z7, K5, (R9)(Z2*4)
	ADDQ          $128, SI
	SUBQ          $16, CX
	JNZ           loop

	SUBQ R10, DI
	SHRQ $2, DI
	MOVQ DI, ret+48(FP)
	VZEROUPPER
	RET
