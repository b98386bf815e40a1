#include "textflag.h"
#include "tile_amd64.h"

// DOTSARGS loads the arguments of dotsInt8VNNI and dotsInt8VNNICached
// (q SI, rows DI, stride R8, n R9, count R10, out R11) and sets Z31 to
// 0x80 bytes (the sign bits flipped to shift int8 into uint8) and Z30 to
// ones.
#define DOTSARGS \
	MOVQ q+0(FP), SI; \
	MOVQ rows+8(FP), DI; \
	MOVQ stride+16(FP), R8; \
	MOVQ n+24(FP), R9; \
	MOVQ count+32(FP), R10; \
	MOVQ out+40(FP), R11; \
	MOVL $0x80808080, AX; \
	VPBROADCASTD AX, Z31; \
	MOVL $0x01010101, AX; \
	VPBROADCASTD AX, Z30

// HSUM0 sums Z0's 16 int32 lanes into X0's first, using Y1.
#define HSUM0 \
	VEXTRACTI64X4 $1, Z0, Y1; \
	VPADDD        Y1, Y0, Y0; \
	VEXTRACTI128  $1, Y0, X1; \
	VPADDD        X1, X0, X0; \
	VPSHUFD       $0x4E, X0, X1; \
	VPADDD        X1, X0, X0; \
	VPSHUFD       $0xB1, X0, X1; \
	VPADDD        X1, X0, X0

// VROW multiplies one k quad of A's row at (REG)(BX*1), broadcast into Z4,
// by the four panels' 16 columns each (Z0..Z3) and adds the int32 sums to
// the row's accumulators A0..A3. VPDPBUSD sums four unsigned-by-signed
// byte products into each int32 lane without saturating, so the sums are
// those of the AVX2 kernel, exactly.
#define VROW(REG, A0, A1, A2, A3) \
	VPBROADCASTD (REG)(BX*1), Z4; \
	VPDPBUSD     Z0, Z4, A0; \
	VPDPBUSD     Z1, Z4, A1; \
	VPDPBUSD     Z2, Z4, A2; \
	VPDPBUSD     Z3, Z4, A3

// VCOL scales one row's accumulator ACC of the panel whose column sums are
// at SUMS and scales at SCALES back to float32 and stores it at OFF(R8):
// float32(acc − zx·colsum) · (sw·sx), zx broadcast in Z4, sx in Z5.
#define VCOL(SUMS, SCALES, ACC, OFF) \
	VPMULLD   SUMS, Z4, Z6; \
	VPSUBD    Z6, ACC, ACC; \
	VCVTDQ2PS ACC, ACC; \
	VMULPS    SCALES, Z5, Z6; \
	VMULPS    Z6, ACC, ACC; \
	VMOVUPS   ACC, OFF(R8)

// VSTORE scales and stores one row's four accumulators, its zero point and
// scale read after its codes at (REG)(BX*1), and moves R8 to C's next row.
#define VSTORE(REG, A0, A1, A2, A3) \
	VPBROADCASTD (REG)(BX*1), Z4; \
	VBROADCASTSS 4(REG)(BX*1), Z5; \
	VCOL((DI), 64(DI), A0, 0); \
	VCOL((DI)(DX*1), 64(DI)(DX*1), A1, 64); \
	VCOL((DI)(DX*2), 64(DI)(DX*2), A2, 128); \
	VCOL((AX), 64(AX), A3, 192); \
	ADDQ R9, R8

// func gemmU8S8VNNI(kq int, a *byte, lda int, b *byte, c *float32, ldc int)
//
// C[0:6][0:64] = A[0:6] · B over kq k quads for B four consecutive int8
// panels (gemm_int8.go's layout, each 64·kq + 128 bytes), scaled to
// float32, overwriting C. A rows are lda bytes apart, C rows ldc floats
// apart. kq >= 1. Z8..Z31 accumulate the 6×64 tile in int32 (row r in
// Z(8+4r) .. Z(11+4r)); Z0..Z3 hold a quad of the panels' rows, Z4 a
// broadcast quad of A.
TEXT ·gemmU8S8VNNI(SB), NOSPLIT, $0-48
	TILEARGS(kq, 0)

	ROWS6

	// DX is now a panel's length, AX the fourth panel.
	MOVQ CX, DX
	SHLQ $6, DX
	ADDQ $128, DX
	LEAQ (DI)(DX*2), AX
	ADDQ DX, AX

	ZEROACC

quads:
	VMOVDQU32 (DI), Z0
	VMOVDQU32 (DI)(DX*1), Z1
	VMOVDQU32 (DI)(DX*2), Z2
	VMOVDQU32 (AX), Z3
	VROW(SI, Z8, Z9, Z10, Z11)
	VROW(R10, Z12, Z13, Z14, Z15)
	VROW(R11, Z16, Z17, Z18, Z19)
	VROW(R12, Z20, Z21, Z22, Z23)
	VROW(R13, Z24, Z25, Z26, Z27)
	VROW(R14, Z28, Z29, Z30, Z31)
	ADDQ $4, BX
	ADDQ $64, DI
	ADDQ $64, AX
	DECQ CX
	JNZ  quads

	// BX is now the offset of each row's zero point and scale; DI and AX
	// the first and fourth panels' column sums and scales.
	VSTORE(SI, Z8, Z9, Z10, Z11)
	VSTORE(R10, Z12, Z13, Z14, Z15)
	VSTORE(R11, Z16, Z17, Z18, Z19)
	VSTORE(R12, Z20, Z21, Z22, Z23)
	VSTORE(R13, Z24, Z25, Z26, Z27)
	VSTORE(R14, Z28, Z29, Z30, Z31)
	VZEROUPPER
	RET

// func dotsInt8VNNI(q *int8, rows *int8, stride int, n int, count int, out *int32)
//
// out[r] = Σ q[i]·rows[r·stride + i] over i < n, for r < count: count
// rows stride bytes apart in one call, n a positive multiple of 64.
// VPDPBUSD multiplies unsigned by signed bytes, so q is shifted into
// [0, 255] (q + 128, its sign bit flipped) and 128·Σ rows[…], summed
// alongside by VPDPBUSD with ones, taken off at the end: the sums wrap as
// int32 sums do, so each result is exact whenever the true one fits an
// int32. Two pairs of accumulators, 128 bytes a step, keep the adds'
// latency out of the way.
TEXT ·dotsInt8VNNI(SB), NOSPLIT, $0-48
	DOTSARGS

row:
	VPXORD Z0, Z0, Z0
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	MOVQ   SI, R12
	MOVQ   DI, R13
	MOVQ   R9, CX
	CMPQ   CX, $128
	JLT    rowtail

rowloop:
	VMOVDQU32 (R12), Z1
	VMOVDQU32 64(R12), Z6
	VPXORD    Z31, Z1, Z1
	VPXORD    Z31, Z6, Z6
	VMOVDQU32 (R13), Z2
	VMOVDQU32 64(R13), Z7
	VPDPBUSD  Z2, Z1, Z0
	VPDPBUSD  Z2, Z30, Z3
	VPDPBUSD  Z7, Z6, Z4
	VPDPBUSD  Z7, Z30, Z5
	ADDQ      $128, R12
	ADDQ      $128, R13
	SUBQ      $128, CX
	CMPQ      CX, $128
	JGE       rowloop

rowtail:
	TESTQ CX, CX
	JZ    rowdone
	VMOVDQU32 (R12), Z1
	VPXORD    Z31, Z1, Z1
	VMOVDQU32 (R13), Z2
	VPDPBUSD  Z2, Z1, Z0
	VPDPBUSD  Z2, Z30, Z3

rowdone:
	VPADDD        Z4, Z0, Z0
	VPADDD        Z5, Z3, Z3
	VPSLLD        $7, Z3, Z3
	VPSUBD        Z3, Z0, Z0
	HSUM0
	VMOVD         X0, (R11)
	ADDQ          $4, R11
	ADDQ          R8, DI
	DECQ          R10
	JNZ           row
	VZEROUPPER
	RET

// func dotsInt8VNNICached(q *int8, rows *int8, stride int, n int, count int, out *int32)
//
// out[r] = Σ q[i]·rows[r·stride + i] over i < n, for r < count: count
// rows stride bytes apart in one call, n a positive multiple of 64.
// VPDPBUSD multiplies unsigned by signed bytes, so each row's codes are
// shifted into [0, 255] (r + 128, their sign bit flipped) against q's
// signed ones, and 128·Σ q[i], summed once by VPDPBUSD with ones, is
// taken off every result: the sums wrap as int32 sums do, so each result
// is exact whenever the true one fits an int32. Four rows at a time share
// each 64 bytes of q read and one reduction of their four accumulators:
// about 1.5 times dotsInt8VNNI's speed over rows in the core's cache, but
// slower over rows read from memory, whose four streams at once the
// prefetcher serves worse than dotsInt8VNNI's one.
TEXT ·dotsInt8VNNICached(SB), NOSPLIT, $0-48
	DOTSARGS

	// Z29 = 128·Σ q[i] in every lane.
	VPXORD Z0, Z0, Z0
	MOVQ   SI, R12
	MOVQ   R9, CX

cqsum:
	VPDPBUSD (R12), Z30, Z0
	ADDQ     $64, R12
	SUBQ     $64, CX
	JNZ      cqsum
	HSUM0
	VPSLLD        $7, X0, X0
	VPBROADCASTD  X0, Z29

	LEAQ (R8)(R8*2), R14 // three rows' stride

cfour:
	CMPQ R10, $4
	JLT  cone
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ   SI, R12
	MOVQ   DI, R13
	MOVQ   R9, CX

cfourloop:
	VMOVDQU32 (R12), Z4
	VPXORD    (R13), Z31, Z5
	VPXORD    (R13)(R8*1), Z31, Z6
	VPXORD    (R13)(R8*2), Z31, Z7
	VPXORD    (R13)(R14*1), Z31, Z8
	VPDPBUSD  Z4, Z5, Z0
	VPDPBUSD  Z4, Z6, Z1
	VPDPBUSD  Z4, Z7, Z2
	VPDPBUSD  Z4, Z8, Z3
	ADDQ      $64, R12
	ADDQ      $64, R13
	SUBQ      $64, CX
	JNZ       cfourloop

	// Sum each accumulator's 16 lanes, the four sums side by side in X0.
	VEXTRACTI64X4 $1, Z0, Y4
	VPADDD        Y4, Y0, Y0
	VEXTRACTI64X4 $1, Z1, Y5
	VPADDD        Y5, Y1, Y1
	VEXTRACTI64X4 $1, Z2, Y6
	VPADDD        Y6, Y2, Y2
	VEXTRACTI64X4 $1, Z3, Y7
	VPADDD        Y7, Y3, Y3
	VPHADDD       Y1, Y0, Y0
	VPHADDD       Y3, Y2, Y2
	VPHADDD       Y2, Y0, Y0
	VEXTRACTI128  $1, Y0, X1
	VPADDD        X1, X0, X0
	VPSUBD        X29, X0, X0
	VMOVDQU       X0, (R11)
	ADDQ          $16, R11
	LEAQ          (DI)(R8*4), DI
	SUBQ          $4, R10
	JMP           cfour

cone:
	TESTQ R10, R10
	JZ    cdone
	VPXORD Z0, Z0, Z0
	MOVQ   SI, R12
	MOVQ   DI, R13
	MOVQ   R9, CX

coneloop:
	VPXORD   (R13), Z31, Z5
	VPDPBUSD (R12), Z5, Z0
	ADDQ     $64, R12
	ADDQ     $64, R13
	SUBQ     $64, CX
	JNZ      coneloop

	HSUM0
	VPSUBD        X29, X0, X0
	VMOVD         X0, (R11)
	ADDQ          $4, R11
	ADDQ          R8, DI
	DECQ          R10
	JMP           cone

cdone:
	VZEROUPPER
	RET

// The lanes' own indices, 0 to 15.
DATA lanes<>+0(SB)/8, $0x0000000100000000
DATA lanes<>+8(SB)/8, $0x0000000300000002
DATA lanes<>+16(SB)/8, $0x0000000500000004
DATA lanes<>+24(SB)/8, $0x0000000700000006
DATA lanes<>+32(SB)/8, $0x0000000900000008
DATA lanes<>+40(SB)/8, $0x0000000b0000000a
DATA lanes<>+48(SB)/8, $0x0000000d0000000c
DATA lanes<>+56(SB)/8, $0x0000000f0000000e
GLOBL lanes<>(SB), RODATA|NOPTR, $64

// func scaledAboveAVX512(dots *int32, scales *float32, n int, scale, floor float32, idx *int32) int
//
// ScaledAbove for n a positive multiple of 16, 16 at a time: each sum to
// float32 (exact: under 2^24), times its scale, times scale, compared
// with floor; the passing lanes' indices compressed in a register and
// stored whole (idx has room for 16 past the count), the count advanced
// by the mask's bits.
TEXT ·scaledAboveAVX512(SB), NOSPLIT, $0-48
	MOVQ         dots+0(FP), SI
	MOVQ         scales+8(FP), DX
	MOVQ         n+16(FP), CX
	VBROADCASTSS scale+24(FP), Z1
	VBROADCASTSS floor+28(FP), Z2
	MOVQ         idx+32(FP), DI
	VMOVDQU32    lanes<>(SB), Z3
	MOVL         $16, AX
	VPBROADCASTD AX, Z4
	XORQ         R8, R8 // the count

saloop:
	VCVTDQ2PS   (SI), Z0
	VMULPS      (DX), Z0, Z0
	VMULPS      Z1, Z0, Z0
	VCMPPS      $0x1d, Z2, Z0, K1 // Z0 ≥ floor, ordered
	VPCOMPRESSD Z3, K1, Z5
	VMOVDQU32   Z5, (DI)(R8*4)
	KMOVW       K1, AX
	POPCNTL     AX, AX
	ADDQ        AX, R8
	VPADDD      Z4, Z3, Z3
	ADDQ        $64, SI
	ADDQ        $64, DX
	SUBQ        $16, CX
	JNZ         saloop
	MOVQ        R8, ret+40(FP)
	VZEROUPPER
	RET

// RED4 sums each of four accumulators' 16 int32 lanes (ZA..ZD, whose
// lower halves are YA..YD), the four sums side by side in XA, the low
// 128 bits of ZA, using Y16..Y19. ZA..ZD must be Z0..Z15: VPHADDD has no
// EVEX form.
#define RED4(ZA, ZB, ZC, ZD, YA, YB, YC, YD, XA) \
	VEXTRACTI64X4 $1, ZA, Y16; \
	VPADDD        Y16, YA, YA; \
	VEXTRACTI64X4 $1, ZB, Y17; \
	VPADDD        Y17, YB, YB; \
	VEXTRACTI64X4 $1, ZC, Y18; \
	VPADDD        Y18, YC, YC; \
	VEXTRACTI64X4 $1, ZD, Y19; \
	VPADDD        Y19, YD, YD; \
	VPHADDD       YB, YA, YA; \
	VPHADDD       YD, YC, YC; \
	VPHADDD       YC, YA, YA; \
	VEXTRACTI32X4 $1, YA, X16; \
	VPADDD        X16, XA, XA

// func dotsInt8VNNIFour(q *[4]*int8, rows *int8, stride int, n int, count int, out *[4]*int32)
//
// out[j][r] = Σ q[j][i]·rows[r·stride + i] over i < n, for j < 4 and
// r < count: four queries of n codes each against count rows stride bytes
// apart, n a positive multiple of 64, count a positive multiple of 4.
// Four rows meet four queries a step, 16 accumulators (Z0..Z15, row r and
// query j in Z(4r+j)): each 64 bytes of a row are read and shifted into
// [0, 255] once for the four queries, and each 64 bytes of a query once for
// the four rows, so a block of rows already in the core's cache is read a
// quarter as often as by four dotsInt8VNNICached calls. 128·Σ q[j][i],
// summed first by VPDPBUSD with ones, is taken off query j's sums (as in
// dotsInt8VNNICached): each result is exact whenever the true one fits
// an int32. Reading four rows 64 bytes at a time is four streams the
// hardware prefetcher of an AMD EPYC Zen 4 does not follow, so each step
// asks for the same bytes of the rows eight ahead (over 29,184 rows of
// 768 codes from memory, four queries: 2.63 -> 1.01-1.27 ms).
TEXT ·dotsInt8VNNIFour(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), AX
	MOVQ 0(AX), SI
	MOVQ 8(AX), BX
	MOVQ 16(AX), DX
	MOVQ 24(AX), R13
	MOVQ rows+8(FP), DI
	MOVQ stride+16(FP), R8
	MOVQ n+24(FP), R9
	MOVQ count+32(FP), R11
	MOVQ out+40(FP), R12
	LEAQ (R8)(R8*2), R14 // three rows' stride
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z31
	MOVL $0x01010101, AX
	VPBROADCASTD AX, Z30

	// X26..X29 = 128·Σ q[j][i] for j = 0..3, in every lane.
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ   CX, CX

fsum:
	VPDPBUSD (SI)(CX*1), Z30, Z0
	VPDPBUSD (BX)(CX*1), Z30, Z1
	VPDPBUSD (DX)(CX*1), Z30, Z2
	VPDPBUSD (R13)(CX*1), Z30, Z3
	ADDQ     $64, CX
	CMPQ     CX, R9
	JLT      fsum
	RED4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0)
	VPSLLD   $7, X0, X0
	VPSHUFD  $0x00, X0, X26
	VPSHUFD  $0x55, X0, X27
	VPSHUFD  $0xAA, X0, X28
	VPSHUFD  $0xFF, X0, X29
	XORQ     R10, R10 // the row of the first of the next four

ffour:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	XORQ   CX, CX

floop:
	LEAQ      (DI)(CX*1), AX
	VMOVDQU32 (SI)(CX*1), Z16
	VMOVDQU32 (BX)(CX*1), Z17
	VMOVDQU32 (DX)(CX*1), Z18
	VMOVDQU32 (R13)(CX*1), Z19
	VPXORD    (AX), Z31, Z20
	VPXORD    (AX)(R8*1), Z31, Z21
	VPXORD    (AX)(R8*2), Z31, Z22
	VPXORD    (AX)(R14*1), Z31, Z23
	LEAQ      (AX)(R8*8), AX
	PREFETCHT0 (AX)
	PREFETCHT0 (AX)(R8*1)
	PREFETCHT0 (AX)(R8*2)
	PREFETCHT0 (AX)(R14*1)
	VPDPBUSD  Z16, Z20, Z0
	VPDPBUSD  Z17, Z20, Z1
	VPDPBUSD  Z18, Z20, Z2
	VPDPBUSD  Z19, Z20, Z3
	VPDPBUSD  Z16, Z21, Z4
	VPDPBUSD  Z17, Z21, Z5
	VPDPBUSD  Z18, Z21, Z6
	VPDPBUSD  Z19, Z21, Z7
	VPDPBUSD  Z16, Z22, Z8
	VPDPBUSD  Z17, Z22, Z9
	VPDPBUSD  Z18, Z22, Z10
	VPDPBUSD  Z19, Z22, Z11
	VPDPBUSD  Z16, Z23, Z12
	VPDPBUSD  Z17, Z23, Z13
	VPDPBUSD  Z18, Z23, Z14
	VPDPBUSD  Z19, Z23, Z15
	ADDQ      $64, CX
	CMPQ      CX, R9
	JLT       floop

	// Query j's sums over the four rows, less its correction, to out[j].
	RED4(Z0, Z4, Z8, Z12, Y0, Y4, Y8, Y12, X0)
	VPSUBD  X26, X0, X0
	MOVQ    0(R12), AX
	VMOVDQU X0, (AX)(R10*4)
	RED4(Z1, Z5, Z9, Z13, Y1, Y5, Y9, Y13, X1)
	VPSUBD  X27, X1, X1
	MOVQ    8(R12), AX
	VMOVDQU X1, (AX)(R10*4)
	RED4(Z2, Z6, Z10, Z14, Y2, Y6, Y10, Y14, X2)
	VPSUBD  X28, X2, X2
	MOVQ    16(R12), AX
	VMOVDQU X2, (AX)(R10*4)
	RED4(Z3, Z7, Z11, Z15, Y3, Y7, Y11, Y15, X3)
	VPSUBD  X29, X3, X3
	MOVQ    24(R12), AX
	VMOVDQU X3, (AX)(R10*4)

	ADDQ $4, R10
	LEAQ (DI)(R8*4), DI
	CMPQ R10, R11
	JLT  ffour
	VZEROUPPER
	RET
