#include "textflag.h"
#include "tile_amd64.h"

// ROW multiplies the 16 columns of B's row (Y0, Y1) by one element of A's
// row at ADDR(BX), broadcast into T, and adds them to that row's
// accumulators ACC0, ACC1.
#define ROW(ADDR, T, ACC0, ACC1) \
	VBROADCASTSS ADDR(BX*1), T; \
	VFMADD231PS  Y0, T, ACC0; \
	VFMADD231PS  Y1, T, ACC1

// STOREROW stores one row's accumulators at R8 and moves R8 to C's next row.
#define STOREROW(ACC0, ACC1) \
	VMOVUPS ACC0, (R8); \
	VMOVUPS ACC1, 32(R8); \
	ADDQ    R9, R8

// func sgemm6x16AVX2(k int, a *float32, lda int, b *float32, c *float32, ldc int)
//
// C[0:6][0:16] = A[0:6][0:k] · B[0:k][0:16], overwriting C.
// A rows are lda floats apart; B is one packed panel (k rows of 16 floats,
// contiguous); C rows are ldc floats apart. k >= 1.
// Y4..Y15 accumulate the 6×16 tile; Y0, Y1 hold a row of B; Y2, Y3 a
// broadcast element of A.
TEXT ·sgemm6x16AVX2(SB), NOSPLIT, $0-48
	TILEARGS(k, 2)

	ROWS6

	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15

loop:
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	ROW((SI), Y2, Y4, Y5)
	ROW((R10), Y3, Y6, Y7)
	ROW((R11), Y2, Y8, Y9)
	ROW((R12), Y3, Y10, Y11)
	ROW((R13), Y2, Y12, Y13)
	ROW((R14), Y3, Y14, Y15)
	ADDQ $4, BX
	ADDQ $64, DI
	DECQ CX
	JNZ  loop

	STOREROW(Y4, Y5)
	STOREROW(Y6, Y7)
	STOREROW(Y8, Y9)
	STOREROW(Y10, Y11)
	STOREROW(Y12, Y13)
	STOREROW(Y14, Y15)

	// Leave no dirty upper halves behind: later SSE code (math.Exp among
	// it) runs far slower otherwise.
	VZEROUPPER
	RET

// func dotAVX2(a *float32, b *float32, n int) float32
//
// The inner product of a[0:n] and b[0:n], n a positive multiple of 8.
// Four accumulators hide the FMA latency.
TEXT ·dotAVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	CMPQ CX, $32
	JLT  tail8

loop32:
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	CMPQ        CX, $32
	JGE         loop32

tail8:
	CMPQ        CX, $8
	JLT         done
	VMOVUPS     (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         tail8

done:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func dequantAVX2(dst *float32, codes *byte, n int, scale float32)
//
// dst[i] = scale · float32(int8(codes[i])) for i < n, n a positive multiple
// of 8: each eight codes sign-extended to int32 (VPMOVSXBD), converted
// (exactly) and multiplied, the same single rounding as Go's.
TEXT ·dequantAVX2(SB), NOSPLIT, $0-28
	MOVQ         dst+0(FP), DI
	MOVQ         codes+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS scale+24(FP), Y4
	CMPQ         CX, $32
	JLT          dequant8

dequant32:
	VPMOVSXBD (SI), Y0
	VPMOVSXBD 8(SI), Y1
	VPMOVSXBD 16(SI), Y2
	VPMOVSXBD 24(SI), Y3
	VCVTDQ2PS Y0, Y0
	VCVTDQ2PS Y1, Y1
	VCVTDQ2PS Y2, Y2
	VCVTDQ2PS Y3, Y3
	VMULPS    Y4, Y0, Y0
	VMULPS    Y4, Y1, Y1
	VMULPS    Y4, Y2, Y2
	VMULPS    Y4, Y3, Y3
	VMOVUPS   Y0, (DI)
	VMOVUPS   Y1, 32(DI)
	VMOVUPS   Y2, 64(DI)
	VMOVUPS   Y3, 96(DI)
	ADDQ      $32, SI
	ADDQ      $128, DI
	SUBQ      $32, CX
	CMPQ      CX, $32
	JGE       dequant32

dequant8:
	CMPQ      CX, $8
	JLT       dequantdone
	VPMOVSXBD (SI), Y0
	VCVTDQ2PS Y0, Y0
	VMULPS    Y4, Y0, Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $8, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       dequant8

dequantdone:
	VZEROUPPER
	RET

// GRIDSTEP multiplies a step's eight floats of b row B (into Y15) by those
// of the three a rows (Y12..Y14) and adds them to that column's
// accumulators.
#define GRIDSTEP(B, ACC0, ACC1, ACC2) \
	VMOVUPS     (B)(R8*1), Y15; \
	VFMADD231PS Y15, Y12, ACC0; \
	VFMADD231PS Y15, Y13, ACC1; \
	VFMADD231PS Y15, Y14, ACC2

// GRIDREDUCE adds one pair's eight lanes as dotAVX2 adds its first
// accumulator's, into OFF(R11).
#define GRIDREDUCE(Y, X, OFF) \
	VEXTRACTF128 $1, Y, X15; \
	VADDPS       X15, X, X; \
	VHADDPS      X, X, X; \
	VHADDPS      X, X, X; \
	MOVSS        X, OFF(R11)

// GRIDKEEP stores the twelve accumulators at OFF(R12).
#define GRIDKEEP(OFF) \
	VMOVUPS Y0, OFF+0(R12); \
	VMOVUPS Y1, OFF+32(R12); \
	VMOVUPS Y2, OFF+64(R12); \
	VMOVUPS Y3, OFF+96(R12); \
	VMOVUPS Y4, OFF+128(R12); \
	VMOVUPS Y5, OFF+160(R12); \
	VMOVUPS Y6, OFF+192(R12); \
	VMOVUPS Y7, OFF+224(R12); \
	VMOVUPS Y8, OFF+256(R12); \
	VMOVUPS Y9, OFF+288(R12); \
	VMOVUPS Y10, OFF+320(R12); \
	VMOVUPS Y11, OFF+352(R12)

// GRIDADD adds the twelve kept at OFF(R12) to the accumulators.
#define GRIDADD(OFF) \
	VADDPS OFF+0(R12), Y0, Y0; \
	VADDPS OFF+32(R12), Y1, Y1; \
	VADDPS OFF+64(R12), Y2, Y2; \
	VADDPS OFF+96(R12), Y3, Y3; \
	VADDPS OFF+128(R12), Y4, Y4; \
	VADDPS OFF+160(R12), Y5, Y5; \
	VADDPS OFF+192(R12), Y6, Y6; \
	VADDPS OFF+224(R12), Y7, Y7; \
	VADDPS OFF+256(R12), Y8, Y8; \
	VADDPS OFF+288(R12), Y9, Y9; \
	VADDPS OFF+320(R12), Y10, Y10; \
	VADDPS OFF+352(R12), Y11, Y11

// func dotsGrid3x4AVX2(a0, a1, a2, b0, b1, b2, b3 *float32, n int, out *float32, scratch *float32)
//
// out[4i+j] = dotAVX2(ai, bj, n) for three rows of a and four of b, n a
// positive multiple of 32, bit for bit: dotAVX2 keeps four accumulators of
// eight lanes, the k-th taking elements 32s+8k..32s+8k+7 of every step s.
// Twelve accumulators (Y0..Y11, pair (i, j) in Y(3j+i)) cannot hold the
// four of twelve pairs at once, so the kernel makes four passes over the
// rows, the k-th summing the k-th accumulator of every pair exactly as
// dotAVX2 sums it, and keeps them in scratch (192 floats) between passes:
// the first and second added as dotAVX2 adds them, the third, then the
// sum of the third and fourth added to the first two's. A pass's step
// reads seven rows' eight floats for twelve FMAs, where dotAVX2 reads two
// for one.
TEXT ·dotsGrid3x4AVX2(SB), NOSPLIT, $0-80
	MOVQ a0+0(FP), SI
	MOVQ a1+8(FP), DI
	MOVQ a2+16(FP), AX
	MOVQ b0+24(FP), BX
	MOVQ b1+32(FP), CX
	MOVQ b2+40(FP), DX
	MOVQ b3+48(FP), R9
	MOVQ n+56(FP), R10
	MOVQ out+64(FP), R11
	MOVQ scratch+72(FP), R12
	SHLQ $2, R10
	XORQ R13, R13

gridpass:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	MOVQ   R13, R8

gridloop:
	VMOVUPS (SI)(R8*1), Y12
	VMOVUPS (DI)(R8*1), Y13
	VMOVUPS (AX)(R8*1), Y14
	GRIDSTEP(BX, Y0, Y1, Y2)
	GRIDSTEP(CX, Y3, Y4, Y5)
	GRIDSTEP(DX, Y6, Y7, Y8)
	GRIDSTEP(R9, Y9, Y10, Y11)
	ADDQ    $128, R8
	CMPQ    R8, R10
	JLT     gridloop

	CMPQ R13, $32
	JLT  gridfirst
	JEQ  gridsecond
	CMPQ R13, $64
	JEQ  gridthird

	// The fourth: the third and fourth accumulators' sum, added to the
	// first and second's.
	GRIDADD(384)
	GRIDADD(0)
	GRIDREDUCE(Y0, X0, 0)
	GRIDREDUCE(Y1, X1, 16)
	GRIDREDUCE(Y2, X2, 32)
	GRIDREDUCE(Y3, X3, 4)
	GRIDREDUCE(Y4, X4, 20)
	GRIDREDUCE(Y5, X5, 36)
	GRIDREDUCE(Y6, X6, 8)
	GRIDREDUCE(Y7, X7, 24)
	GRIDREDUCE(Y8, X8, 40)
	GRIDREDUCE(Y9, X9, 12)
	GRIDREDUCE(Y10, X10, 28)
	GRIDREDUCE(Y11, X11, 44)
	VZEROUPPER
	RET

gridfirst:
	GRIDKEEP(0)
	JMP gridnext

gridsecond:
	GRIDADD(0)
	GRIDKEEP(0)
	JMP gridnext

gridthird:
	GRIDKEEP(384)

gridnext:
	ADDQ $32, R13
	JMP  gridpass

// DOTS4STEP adds one step's products to the four rows' two accumulators
// of a pass: v's sixteen floats at R8 (two loads) times each row's.
#define DOTS4STEP \
	VMOVUPS     (SI)(R8*1), Y8; \
	VMOVUPS     32(SI)(R8*1), Y9; \
	VFMADD231PS (AX)(R8*1), Y8, Y0; \
	VFMADD231PS 32(AX)(R8*1), Y9, Y1; \
	VFMADD231PS (BX)(R8*1), Y8, Y2; \
	VFMADD231PS 32(BX)(R8*1), Y9, Y3; \
	VFMADD231PS (DX)(R8*1), Y8, Y4; \
	VFMADD231PS 32(DX)(R8*1), Y9, Y5; \
	VFMADD231PS (DI)(R8*1), Y8, Y6; \
	VFMADD231PS 32(DI)(R8*1), Y9, Y7

// DOTS4ZERO clears the four rows' accumulators.
#define DOTS4ZERO \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7

// func dots4AVX2(v *float32, r0, r1, r2, r3 *float32, n int, out *float32)
//
// out[i] = dotAVX2(v, ri, n) for the four rows, n a positive multiple of
// 32, bit for bit. dotAVX2's four accumulators a row are 16 registers for
// four rows, more than AVX2 leaves beside v, so the kernel makes two
// passes: the first sums each row's first and second accumulators
// (elements 0-15 of every 32) and adds them as dotAVX2 does, the second
// its third and fourth, then adds the two. The four rows are read
// together, four streams from memory in flight where Dot has one, and v
// is read once for them.
TEXT ·dots4AVX2(SB), NOSPLIT, $0-56
	MOVQ v+0(FP), SI
	MOVQ r0+8(FP), AX
	MOVQ r1+16(FP), BX
	MOVQ r2+24(FP), DX
	MOVQ r3+32(FP), DI
	MOVQ n+40(FP), CX
	MOVQ out+48(FP), R11
	SHLQ $2, CX
	DOTS4ZERO
	XORQ R8, R8

dots4first:
	DOTS4STEP
	ADDQ $128, R8
	CMPQ R8, CX
	JLT  dots4first

	VADDPS Y1, Y0, Y10
	VADDPS Y3, Y2, Y11
	VADDPS Y5, Y4, Y12
	VADDPS Y7, Y6, Y13
	DOTS4ZERO
	MOVQ   $64, R8

dots4second:
	DOTS4STEP
	ADDQ $128, R8
	CMPQ R8, CX
	JLT  dots4second

	VADDPS Y1, Y0, Y0
	VADDPS Y10, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y11, Y2, Y2
	VADDPS Y5, Y4, Y4
	VADDPS Y12, Y4, Y4
	VADDPS Y7, Y6, Y6
	VADDPS Y13, Y6, Y6
	GRIDREDUCE(Y0, X0, 0)
	GRIDREDUCE(Y2, X2, 4)
	GRIDREDUCE(Y4, X4, 8)
	GRIDREDUCE(Y6, X6, 12)
	VZEROUPPER
	RET

// func scaledAboveAVX2(dots *int32, scales *float32, n int, scale, floor float32, idx *int32) int
//
// ScaledAbove for n a positive multiple of 8, 8 at a time: each sum to
// float32, times its scale, times scale, compared with floor (ordered, as
// Go's >=); a step no lane of which passes (most of them) costs no
// branch taken, and a passing lane's index is appended alone.
TEXT ·scaledAboveAVX2(SB), NOSPLIT, $0-48
	MOVQ         dots+0(FP), SI
	MOVQ         scales+8(FP), DX
	MOVQ         n+16(FP), CX
	VBROADCASTSS scale+24(FP), Y1
	VBROADCASTSS floor+28(FP), Y2
	MOVQ         idx+32(FP), DI
	XORQ         R8, R8 // the count
	XORQ         R9, R9 // the step's first index

saloop:
	VCVTDQ2PS (SI), Y0
	VMULPS    (DX), Y0, Y0
	VMULPS    Y1, Y0, Y0
	VCMPPS    $0x1d, Y2, Y0, Y3 // Y0 ≥ floor, ordered
	VMOVMSKPS Y3, AX
	TESTL     AX, AX
	JNZ       safound

sanext:
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $8, R9
	SUBQ $8, CX
	JNZ  saloop
	MOVQ R8, ret+40(FP)
	VZEROUPPER
	RET

safound:
	BSFL AX, BX
	ADDL R9, BX
	MOVL BX, (DI)(R8*4)
	INCQ R8
	LEAL -1(AX), BX
	ANDL BX, AX
	JNZ  safound
	JMP  sanext
