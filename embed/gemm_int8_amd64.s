#include "textflag.h"
#include "tile_amd64.h"

// Sixteen int16 ones: VPMADDWD by them sums VPMADDUBSW's pairs into int32.
DATA ones16<>+0(SB)/8, $0x0001000100010001
DATA ones16<>+8(SB)/8, $0x0001000100010001
DATA ones16<>+16(SB)/8, $0x0001000100010001
DATA ones16<>+24(SB)/8, $0x0001000100010001
GLOBL ones16<>(SB), RODATA|NOPTR, $32

// QROW multiplies one k quad of A's row at (REG)(BX*1), broadcast into Y2,
// by the panel's 16 columns (Y0, Y1) and adds the int32 sums to the row's
// accumulators ACC0, ACC1. The pair sums never saturate: weights are
// 7-bit.
#define QROW(REG, ACC0, ACC1) \
	VPBROADCASTD (REG)(BX*1), Y2; \
	VPMADDUBSW   Y0, Y2, Y3; \
	VPMADDWD     ones16<>(SB), Y3, Y3; \
	VPADDD       Y3, ACC0, ACC0; \
	VPMADDUBSW   Y1, Y2, Y3; \
	VPMADDWD     ones16<>(SB), Y3, Y3; \
	VPADDD       Y3, ACC1, ACC1

// QSTORE scales one row's accumulators back to float32 and stores them at
// R8, moving R8 to C's next row: float32(acc − zx·colsum) · (sw·sx), zx and
// sx read after the row's codes at (REG)(BX*1), colsum and sw after the
// panel's codes at (DI).
#define QSTORE(REG, ACC0, ACC1) \
	VPBROADCASTD (REG)(BX*1), Y2; \
	VPMULLD      (DI), Y2, Y3; \
	VPSUBD       Y3, ACC0, ACC0; \
	VPMULLD      32(DI), Y2, Y3; \
	VPSUBD       Y3, ACC1, ACC1; \
	VCVTDQ2PS    ACC0, ACC0; \
	VCVTDQ2PS    ACC1, ACC1; \
	VBROADCASTSS 4(REG)(BX*1), Y2; \
	VMULPS       64(DI), Y2, Y3; \
	VMULPS       Y3, ACC0, ACC0; \
	VMULPS       96(DI), Y2, Y3; \
	VMULPS       Y3, ACC1, ACC1; \
	VMOVUPS      ACC0, (R8); \
	VMOVUPS      ACC1, 32(R8); \
	ADDQ         R9, R8

// func gemmU8S8AVX2(kq int, a *byte, lda int, b *byte, c *float32, ldc int)
//
// C[0:6][0:16] = A[0:6] · Bpanel over kq k quads (gemm_int8.go's layout),
// scaled to float32, overwriting C. A rows are lda bytes apart, C rows ldc
// floats apart. kq >= 1. Y4..Y15 accumulate the 6×16 tile in int32; Y0, Y1
// hold a quad of the panel's rows, Y2 a broadcast quad of A, Y3 products.
TEXT ·gemmU8S8AVX2(SB), NOSPLIT, $0-48
	TILEARGS(kq, 0)

	ROWS6

	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	VPXOR Y12, Y12, Y12
	VPXOR Y13, Y13, Y13
	VPXOR Y14, Y14, Y14
	VPXOR Y15, Y15, Y15

quads:
	VMOVDQU (DI), Y0
	VMOVDQU 32(DI), Y1
	QROW(SI, Y4, Y5)
	QROW(R10, Y6, Y7)
	QROW(R11, Y8, Y9)
	QROW(R12, Y10, Y11)
	QROW(R13, Y12, Y13)
	QROW(R14, Y14, Y15)
	ADDQ $4, BX
	ADDQ $64, DI
	DECQ CX
	JNZ  quads

	// BX is now the offset of each row's zero point and scale, DI the
	// panel's column sums and scales.
	QSTORE(SI, Y4, Y5)
	QSTORE(R10, Y6, Y7)
	QSTORE(R11, Y8, Y9)
	QSTORE(R12, Y10, Y11)
	QSTORE(R13, Y12, Y13)
	QSTORE(R14, Y14, Y15)
	VZEROUPPER
	RET

// func quantRowAVX2(dst *byte, x *float32, n int, inv, zf float32)
//
// dst[i] = x[i]·inv + zf rounded to the nearest even integer, clamped to
// 0..255, for n a positive multiple of 8 (the product rounded to float32
// before the sum, as quantize does).
TEXT ·quantRowAVX2(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS inv+24(FP), Y1
	VBROADCASTSS zf+28(FP), Y2
	SHRQ         $3, CX

qloop:
	VMULPS       (SI), Y1, Y0
	VADDPS       Y2, Y0, Y0
	VCVTPS2DQ    Y0, Y0
	VPACKSSDW    Y0, Y0, Y0 // in each lane: the four int16, twice
	VPACKUSWB    Y0, Y0, Y0 // in each lane: the four bytes, four times
	VEXTRACTI128 $1, Y0, X3
	VPUNPCKLDQ   X3, X0, X0 // lane 0's four bytes, then lane 1's
	VMOVQ        X0, (DI)
	ADDQ         $32, SI
	ADDQ         $8, DI
	DECQ         CX
	JNZ          qloop
	VZEROUPPER
	RET

// func minMaxAVX2(x *float32, n int) (lo, hi float32)
//
// The least and greatest of x[0:n], n a positive multiple of 8.
TEXT ·minMaxAVX2(SB), NOSPLIT, $0-24
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPS (SI), Y0
	VMOVUPS Y0, Y1
	ADDQ    $32, SI
	SUBQ    $8, CX
	JZ      reduce

mloop:
	VMOVUPS (SI), Y2
	VMINPS  Y2, Y0, Y0
	VMAXPS  Y2, Y1, Y1
	ADDQ    $32, SI
	SUBQ    $8, CX
	JNZ     mloop

reduce:
	VEXTRACTF128 $1, Y0, X2
	VMINPS       X2, X0, X0
	VPERMILPS    $0x4e, X0, X2
	VMINPS       X2, X0, X0
	VPERMILPS    $0xb1, X0, X2
	VMINPS       X2, X0, X0
	VEXTRACTF128 $1, Y1, X2
	VMAXPS       X2, X1, X1
	VPERMILPS    $0x4e, X1, X2
	VMAXPS       X2, X1, X1
	VPERMILPS    $0xb1, X1, X2
	VMAXPS       X2, X1, X1
	VMOVSS       X0, lo+16(FP)
	VMOVSS       X1, hi+20(FP)
	VZEROUPPER
	RET

// Clears a float's sign bit.
DATA absmask<>+0(SB)/8, $0x7fffffff7fffffff
DATA absmask<>+8(SB)/8, $0x7fffffff7fffffff
DATA absmask<>+16(SB)/8, $0x7fffffff7fffffff
DATA absmask<>+24(SB)/8, $0x7fffffff7fffffff
GLOBL absmask<>(SB), RODATA|NOPTR, $32

// func absMaxAVX2(peak, x *float32, n int)
//
// peak[i] = max(peak[i], |x[i]|) for i < n, n a positive multiple of 8.
TEXT ·absMaxAVX2(SB), NOSPLIT, $0-24
	MOVQ    peak+0(FP), DI
	MOVQ    x+8(FP), SI
	MOVQ    n+16(FP), CX
	SHRQ    $3, CX
	VMOVUPS absmask<>(SB), Y1

aloop:
	VANDPS  (SI), Y1, Y0
	VMAXPS  (DI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     aloop
	VZEROUPPER
	RET
