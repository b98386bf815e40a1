#include "textflag.h"
#include "tile_amd64.h"

// ZROW multiplies the 32 columns of B's row (Z0, Z1) by one element of A's
// row at ADDR, broadcast into T, and adds them to that row's accumulators
// ACC0, ACC1.
#define ZROW(ADDR, T, ACC0, ACC1) \
	VBROADCASTSS ADDR, T; \
	VFMADD231PS  Z0, T, ACC0; \
	VFMADD231PS  Z1, T, ACC1

// ZSTORE stores one row's accumulators at R8 and moves R8 to C's next row.
#define ZSTORE(ACC0, ACC1) \
	VMOVUPS ACC0, (R8); \
	VMOVUPS ACC1, 64(R8); \
	ADDQ    R9, R8

// func sgemm12x32AVX512(k int, a *float32, lda int, b *float32, c *float32, ldc int)
//
// C[0:12][0:32] = A[0:12][0:k] · B[0:k][0:32], overwriting C, for B two
// consecutive packed panels (each k rows of 16 floats, contiguous). A rows
// are lda floats apart; C rows ldc floats apart. k >= 1. Z8..Z31
// accumulate the tile (row r in Z(8+2r), Z(9+2r)); Z0, Z1 hold a row of
// the two panels; Z2..Z7 broadcast elements of A.
TEXT ·sgemm12x32AVX512(SB), NOSPLIT, $0-48
	TILEARGS(k, 2)

	ROWS12

	// AX is the second panel, k·16 floats on.
	MOVQ CX, AX
	SHLQ $6, AX
	ADDQ DI, AX

	ZEROACC

loop:
	VMOVUPS (DI), Z0
	VMOVUPS (AX), Z1
	ZROW((SI), Z2, Z8, Z9)
	ZROW((SI)(DX*1), Z3, Z10, Z11)
	ZROW((SI)(DX*2), Z4, Z12, Z13)
	ZROW((R10), Z5, Z14, Z15)
	ZROW((R10)(DX*1), Z6, Z16, Z17)
	ZROW((R10)(DX*2), Z7, Z18, Z19)
	ZROW((R11), Z2, Z20, Z21)
	ZROW((R11)(DX*1), Z3, Z22, Z23)
	ZROW((R11)(DX*2), Z4, Z24, Z25)
	ZROW((R12), Z5, Z26, Z27)
	ZROW((R12)(DX*1), Z6, Z28, Z29)
	ZROW((R12)(DX*2), Z7, Z30, Z31)
	ADDQ $4, SI
	ADDQ $4, R10
	ADDQ $4, R11
	ADDQ $4, R12
	ADDQ $64, DI
	ADDQ $64, AX
	DECQ CX
	JNZ  loop

	ZSTORE(Z8, Z9)
	ZSTORE(Z10, Z11)
	ZSTORE(Z12, Z13)
	ZSTORE(Z14, Z15)
	ZSTORE(Z16, Z17)
	ZSTORE(Z18, Z19)
	ZSTORE(Z20, Z21)
	ZSTORE(Z22, Z23)
	ZSTORE(Z24, Z25)
	ZSTORE(Z26, Z27)
	ZSTORE(Z28, Z29)
	ZSTORE(Z30, Z31)
	VZEROUPPER
	RET

// DOTS4ROW adds one row's accumulators as dotAVX2 adds its four: ZA's
// halves are its first and second (elements 0-7 and 8-15 of every 32),
// ZB's its third and fourth; the sum goes to OFF(R11).
#define DOTS4ROW(ZA, YA, ZB, YB, OFF) \
	VEXTRACTF32X8 $1, ZA, Y5; \
	VADDPS        Y5, YA, Y4; \
	VEXTRACTF32X8 $1, ZB, Y6; \
	VADDPS        Y6, YB, Y5; \
	VADDPS        Y5, Y4, Y4; \
	VEXTRACTF128  $1, Y4, X5; \
	VADDPS        X5, X4, X4; \
	VHADDPS       X4, X4, X4; \
	VHADDPS       X4, X4, X4; \
	MOVSS         X4, OFF(R11)

// func dots4AVX512(v *float32, r0, r1, r2, r3 *float32, n int, out *float32)
//
// out[i] = dotAVX2(v, ri, n) for the four rows, n a positive multiple of
// 8: each row's sums are kept and added exactly as dotAVX2 keeps and adds
// them (four accumulators of eight lanes, 32 elements a step, eights into
// the first), so the results are its bits. A pair of dotAVX2's
// accumulators is one zmm register here, each lane summed alone as
// before, so a step is half the instructions: v's 32 floats are read once
// (two loads) for all four rows, each row's by two FMAs. Z16..Z23 hold the
// accumulators, row r's in Z(16+2r) and Z(17+2r); a step of eight adds to
// the low half of the first alone (mask K1).
TEXT ·dots4AVX512(SB), NOSPLIT, $0-56
	MOVQ   v+0(FP), SI
	MOVQ   r0+8(FP), AX
	MOVQ   r1+16(FP), BX
	MOVQ   r2+24(FP), DX
	MOVQ   r3+32(FP), DI
	MOVQ   n+40(FP), CX
	MOVQ   out+48(FP), R11
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	MOVL   $0xff, R9
	KMOVW  R9, K1
	XORQ   R8, R8
	CMPQ   CX, $32
	JLT    dots4tail

dots4loop:
	VMOVUPS     (SI)(R8*1), Z0
	VMOVUPS     64(SI)(R8*1), Z1
	VFMADD231PS (AX)(R8*1), Z0, Z16
	VFMADD231PS 64(AX)(R8*1), Z1, Z17
	VFMADD231PS (BX)(R8*1), Z0, Z18
	VFMADD231PS 64(BX)(R8*1), Z1, Z19
	VFMADD231PS (DX)(R8*1), Z0, Z20
	VFMADD231PS 64(DX)(R8*1), Z1, Z21
	VFMADD231PS (DI)(R8*1), Z0, Z22
	VFMADD231PS 64(DI)(R8*1), Z1, Z23
	ADDQ        $128, R8
	SUBQ        $32, CX
	CMPQ        CX, $32
	JGE         dots4loop

dots4tail:
	CMPQ        CX, $8
	JLT         dots4done
	VMOVUPS.Z   (SI)(R8*1), K1, Z0
	VFMADD231PS (AX)(R8*1), Z0, K1, Z16
	VFMADD231PS (BX)(R8*1), Z0, K1, Z18
	VFMADD231PS (DX)(R8*1), Z0, K1, Z20
	VFMADD231PS (DI)(R8*1), Z0, K1, Z22
	ADDQ        $32, R8
	SUBQ        $8, CX
	JMP         dots4tail

dots4done:
	DOTS4ROW(Z16, Y16, Z17, Y17, 0)
	DOTS4ROW(Z18, Y18, Z19, Y19, 4)
	DOTS4ROW(Z20, Y20, Z21, Y21, 8)
	DOTS4ROW(Z22, Y22, Z23, Y23, 12)
	VZEROUPPER
	RET
