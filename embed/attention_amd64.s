#include "textflag.h"

// The word indices VPERMT2W takes to interleave two rows of 32 bf16
// values (the first row's in table indices 0-31, the second's 32-63): the
// first 16 pairs, then the last 16.
DATA interleave<>+0(SB)/8, $0x0021000100200000
DATA interleave<>+8(SB)/8, $0x0023000300220002
DATA interleave<>+16(SB)/8, $0x0025000500240004
DATA interleave<>+24(SB)/8, $0x0027000700260006
DATA interleave<>+32(SB)/8, $0x0029000900280008
DATA interleave<>+40(SB)/8, $0x002b000b002a000a
DATA interleave<>+48(SB)/8, $0x002d000d002c000c
DATA interleave<>+56(SB)/8, $0x002f000f002e000e
DATA interleave<>+64(SB)/8, $0x0031001100300010
DATA interleave<>+72(SB)/8, $0x0033001300320012
DATA interleave<>+80(SB)/8, $0x0035001500340014
DATA interleave<>+88(SB)/8, $0x0037001700360016
DATA interleave<>+96(SB)/8, $0x0039001900380018
DATA interleave<>+104(SB)/8, $0x003b001b003a001a
DATA interleave<>+112(SB)/8, $0x003d001d003c001c
DATA interleave<>+120(SB)/8, $0x003f001f003e001e
GLOBL interleave<>(SB), RODATA|NOPTR, $128

// func packBF16ValuesAVX512(dst *uint16, pl, pairs, n int, values *uint16, ld int)
//
// packBF16Values for whole pairs of tokens and whole panels: for pair p
// (tokens 2p and 2p+1, rows ld values apart from values) and panel c (n
// = 32·panels values a token), dst[c·pl + 64p:][:64] interleaves the two
// tokens' values 32c to 32c+31. pairs ≥ 1, n ≥ 32.
TEXT ·packBF16ValuesAVX512(SB), NOSPLIT, $0-48
	MOVQ      dst+0(FP), DI
	MOVQ      pl+8(FP), R10
	MOVQ      pairs+16(FP), BX
	MOVQ      n+24(FP), CX
	MOVQ      values+32(FP), SI
	MOVQ      ld+40(FP), R11
	SHLQ      $1, R10          // bytes between panels
	SHLQ      $1, R11          // bytes between tokens
	SHRQ      $5, CX           // panels
	VMOVDQU16 interleave<>+0(SB), Z28
	VMOVDQU16 interleave<>+64(SB), Z29

pair:
	MOVQ SI, R8                // the first token's values
	LEAQ (SI)(R11*1), R9       // the second's
	MOVQ DI, R12               // the pair's row of panel 0
	MOVQ CX, R13

panel:
	VMOVDQU16 (R8), Z0
	VMOVDQU16 (R9), Z1
	VMOVDQA64 Z0, Z2
	VPERMT2W  Z1, Z28, Z0
	VPERMT2W  Z1, Z29, Z2
	VMOVDQU16 Z0, (R12)
	VMOVDQU16 Z2, 64(R12)
	ADDQ      $64, R8
	ADDQ      $64, R9
	ADDQ      R10, R12
	DECQ      R13
	JNZ       panel

	LEAQ (SI)(R11*2), SI
	ADDQ $128, DI
	DECQ BX
	JNZ  pair
	VZEROUPPER
	RET

// func transposeDwordsAVX512(dst *uint32, rs int, src *uint32, ls int)
//
// A 16×16 transpose of dwords: the 16 dwords of src's row i (rows ls
// bytes apart) go to column i of dst's 16 rows (rs bytes apart), by dword
// and quadword unpacks within 128-bit lanes, then two rounds of lane
// shuffles: attention's keys (float32 values, or bf16 pairs) of 16 tokens
// into a panel's rows.
TEXT ·transposeDwordsAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ rs+8(FP), R10
	MOVQ src+16(FP), SI
	MOVQ ls+24(FP), R11
	VMOVDQU32 (SI), Z0
	ADDQ      R11, SI
	VMOVDQU32 (SI), Z1
	ADDQ      R11, SI
	VMOVDQU32 (SI), Z2
	ADDQ      R11, SI
	VMOVDQU32 (SI), Z3
	ADDQ      R11, SI
	VMOVDQU32 (SI), Z4
	ADDQ      R11, SI
	VMOVDQU32 (SI), Z5
	ADDQ      R11, SI
	VMOVDQU32 (SI), Z6
	ADDQ      R11, SI
	VMOVDQU32 (SI), Z7
	ADDQ      R11, SI
	VMOVDQU32 (SI), Z8
	ADDQ      R11, SI
	VMOVDQU32 (SI), Z9
	ADDQ      R11, SI
	VMOVDQU32 (SI), Z10
	ADDQ      R11, SI
	VMOVDQU32 (SI), Z11
	ADDQ      R11, SI
	VMOVDQU32 (SI), Z12
	ADDQ      R11, SI
	VMOVDQU32 (SI), Z13
	ADDQ      R11, SI
	VMOVDQU32 (SI), Z14
	ADDQ      R11, SI
	VMOVDQU32 (SI), Z15
	// rows 2i, 2i+1: their dwords interleaved, a lane at a time
	VPUNPCKLDQ Z1, Z0, Z16
	VPUNPCKHDQ Z1, Z0, Z17
	VPUNPCKLDQ Z3, Z2, Z18
	VPUNPCKHDQ Z3, Z2, Z19
	VPUNPCKLDQ Z5, Z4, Z20
	VPUNPCKHDQ Z5, Z4, Z21
	VPUNPCKLDQ Z7, Z6, Z22
	VPUNPCKHDQ Z7, Z6, Z23
	VPUNPCKLDQ Z9, Z8, Z24
	VPUNPCKHDQ Z9, Z8, Z25
	VPUNPCKLDQ Z11, Z10, Z26
	VPUNPCKHDQ Z11, Z10, Z27
	VPUNPCKLDQ Z13, Z12, Z28
	VPUNPCKHDQ Z13, Z12, Z29
	VPUNPCKLDQ Z15, Z14, Z30
	VPUNPCKHDQ Z15, Z14, Z31
	// four rows' dword k of a lane together: u(4i+k), k = 0..3
	VPUNPCKLQDQ Z18, Z16, Z0
	VPUNPCKHQDQ Z18, Z16, Z1
	VPUNPCKLQDQ Z19, Z17, Z2
	VPUNPCKHQDQ Z19, Z17, Z3
	VPUNPCKLQDQ Z22, Z20, Z4
	VPUNPCKHQDQ Z22, Z20, Z5
	VPUNPCKLQDQ Z23, Z21, Z6
	VPUNPCKHQDQ Z23, Z21, Z7
	VPUNPCKLQDQ Z26, Z24, Z8
	VPUNPCKHQDQ Z26, Z24, Z9
	VPUNPCKLQDQ Z27, Z25, Z10
	VPUNPCKHQDQ Z27, Z25, Z11
	VPUNPCKLQDQ Z30, Z28, Z12
	VPUNPCKHQDQ Z30, Z28, Z13
	VPUNPCKLQDQ Z31, Z29, Z14
	VPUNPCKHQDQ Z31, Z29, Z15
	// lanes 0 and 2, 1 and 3 of rows 0-7 and of rows 8-15
	VSHUFI32X4 $0x88, Z4, Z0, Z16
	VSHUFI32X4 $0xdd, Z4, Z0, Z20
	VSHUFI32X4 $0x88, Z12, Z8, Z24
	VSHUFI32X4 $0xdd, Z12, Z8, Z28
	VSHUFI32X4 $0x88, Z5, Z1, Z17
	VSHUFI32X4 $0xdd, Z5, Z1, Z21
	VSHUFI32X4 $0x88, Z13, Z9, Z25
	VSHUFI32X4 $0xdd, Z13, Z9, Z29
	VSHUFI32X4 $0x88, Z6, Z2, Z18
	VSHUFI32X4 $0xdd, Z6, Z2, Z22
	VSHUFI32X4 $0x88, Z14, Z10, Z26
	VSHUFI32X4 $0xdd, Z14, Z10, Z30
	VSHUFI32X4 $0x88, Z7, Z3, Z19
	VSHUFI32X4 $0xdd, Z7, Z3, Z23
	VSHUFI32X4 $0x88, Z15, Z11, Z27
	VSHUFI32X4 $0xdd, Z15, Z11, Z31
	// column c of the 16 tokens into Zc
	VSHUFI32X4 $0x88, Z24, Z16, Z0
	VSHUFI32X4 $0xdd, Z24, Z16, Z8
	VSHUFI32X4 $0x88, Z28, Z20, Z4
	VSHUFI32X4 $0xdd, Z28, Z20, Z12
	VSHUFI32X4 $0x88, Z25, Z17, Z1
	VSHUFI32X4 $0xdd, Z25, Z17, Z9
	VSHUFI32X4 $0x88, Z29, Z21, Z5
	VSHUFI32X4 $0xdd, Z29, Z21, Z13
	VSHUFI32X4 $0x88, Z26, Z18, Z2
	VSHUFI32X4 $0xdd, Z26, Z18, Z10
	VSHUFI32X4 $0x88, Z30, Z22, Z6
	VSHUFI32X4 $0xdd, Z30, Z22, Z14
	VSHUFI32X4 $0x88, Z27, Z19, Z3
	VSHUFI32X4 $0xdd, Z27, Z19, Z11
	VSHUFI32X4 $0x88, Z31, Z23, Z7
	VSHUFI32X4 $0xdd, Z31, Z23, Z15
	VMOVDQU32 Z0, (DI)
	ADDQ      R10, DI
	VMOVDQU32 Z1, (DI)
	ADDQ      R10, DI
	VMOVDQU32 Z2, (DI)
	ADDQ      R10, DI
	VMOVDQU32 Z3, (DI)
	ADDQ      R10, DI
	VMOVDQU32 Z4, (DI)
	ADDQ      R10, DI
	VMOVDQU32 Z5, (DI)
	ADDQ      R10, DI
	VMOVDQU32 Z6, (DI)
	ADDQ      R10, DI
	VMOVDQU32 Z7, (DI)
	ADDQ      R10, DI
	VMOVDQU32 Z8, (DI)
	ADDQ      R10, DI
	VMOVDQU32 Z9, (DI)
	ADDQ      R10, DI
	VMOVDQU32 Z10, (DI)
	ADDQ      R10, DI
	VMOVDQU32 Z11, (DI)
	ADDQ      R10, DI
	VMOVDQU32 Z12, (DI)
	ADDQ      R10, DI
	VMOVDQU32 Z13, (DI)
	ADDQ      R10, DI
	VMOVDQU32 Z14, (DI)
	ADDQ      R10, DI
	VMOVDQU32 Z15, (DI)
	VZEROUPPER
	RET
