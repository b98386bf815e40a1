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
