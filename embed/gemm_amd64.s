#include "textflag.h"

// func sgemm6x16AVX2(k int, a *float32, lda int, b *float32, c *float32, ldc int)
//
// C[0:6][0:16] = A[0:6][0:k] · B[0:k][0:16], overwriting C.
// A rows are lda floats apart; B is one packed panel (k rows of 16 floats,
// contiguous); C rows are ldc floats apart. k >= 1.
// Y4..Y15 accumulate the 6×16 tile; Y0, Y1 hold a row of B; Y2, Y3 a
// broadcast element of A.
TEXT ·sgemm6x16AVX2(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), DX
	SHLQ $2, DX
	MOVQ b+24(FP), DI
	MOVQ c+32(FP), R8
	MOVQ ldc+40(FP), R9
	SHLQ $2, R9

	LEAQ (SI)(DX*1), R10
	LEAQ (R10)(DX*1), R11
	LEAQ (R11)(DX*1), R12
	LEAQ (R12)(DX*1), R13
	LEAQ (R13)(DX*1), R14
	XORQ BX, BX

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
	VBROADCASTSS (SI)(BX*1), Y2
	VFMADD231PS Y0, Y2, Y4
	VFMADD231PS Y1, Y2, Y5
	VBROADCASTSS (R10)(BX*1), Y3
	VFMADD231PS Y0, Y3, Y6
	VFMADD231PS Y1, Y3, Y7
	VBROADCASTSS (R11)(BX*1), Y2
	VFMADD231PS Y0, Y2, Y8
	VFMADD231PS Y1, Y2, Y9
	VBROADCASTSS (R12)(BX*1), Y3
	VFMADD231PS Y0, Y3, Y10
	VFMADD231PS Y1, Y3, Y11
	VBROADCASTSS (R13)(BX*1), Y2
	VFMADD231PS Y0, Y2, Y12
	VFMADD231PS Y1, Y2, Y13
	VBROADCASTSS (R14)(BX*1), Y3
	VFMADD231PS Y0, Y3, Y14
	VFMADD231PS Y1, Y3, Y15
	ADDQ $4, BX
	ADDQ $64, DI
	DECQ CX
	JNZ  loop

	VMOVUPS Y4, (R8)
	VMOVUPS Y5, 32(R8)
	ADDQ    R9, R8
	VMOVUPS Y6, (R8)
	VMOVUPS Y7, 32(R8)
	ADDQ    R9, R8
	VMOVUPS Y8, (R8)
	VMOVUPS Y9, 32(R8)
	ADDQ    R9, R8
	VMOVUPS Y10, (R8)
	VMOVUPS Y11, 32(R8)
	ADDQ    R9, R8
	VMOVUPS Y12, (R8)
	VMOVUPS Y13, 32(R8)
	ADDQ    R9, R8
	VMOVUPS Y14, (R8)
	VMOVUPS Y15, 32(R8)

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

// func dotInt8AVX2(a *int8, b *int8, n int) int32
//
// Σ a[i]·b[i] for int8 a and b, n a positive multiple of 32: both are
// sign-extended to int16 and multiplied pairwise-summed into int32 lanes
// (VPMADDWD), two accumulators. |sum| ≤ n·127² fits int32 for n < 133,000.
TEXT ·dotInt8AVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1

loop32:
	VPMOVSXBW (SI), Y2
	VPMOVSXBW (DI), Y3
	VPMADDWD  Y3, Y2, Y2
	VPADDD    Y2, Y0, Y0
	VPMOVSXBW 16(SI), Y4
	VPMOVSXBW 16(DI), Y5
	VPMADDWD  Y5, Y4, Y4
	VPADDD    Y4, Y1, Y1
	ADDQ      $32, SI
	ADDQ      $32, DI
	SUBQ      $32, CX
	JNZ       loop32

	VPADDD       Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPHADDD      X0, X0, X0
	VPHADDD      X0, X0, X0
	VMOVD        X0, AX
	VZEROUPPER
	MOVL         AX, ret+24(FP)
	RET
