#include "textflag.h"
#include "tile_amd64.h"

// Sixteen int16 ones: VPMADDWD by them sums VPMADDUBSW's pairs into int32.
DATA ones16<>+0(SB)/8, $0x0001000100010001
DATA ones16<>+8(SB)/8, $0x0001000100010001
DATA ones16<>+16(SB)/8, $0x0001000100010001
DATA ones16<>+24(SB)/8, $0x0001000100010001
GLOBL ones16<>(SB), RODATA|NOPTR, $32

// MINMAXREDUCE leaves in X0's first lane the least of Y0's eight and in
// X1's the greatest of Y1's, using X2.
#define MINMAXREDUCE \
	VEXTRACTF128 $1, Y0, X2; \
	VMINPS       X2, X0, X0; \
	VPERMILPS    $0x4e, X0, X2; \
	VMINPS       X2, X0, X0; \
	VPERMILPS    $0xb1, X0, X2; \
	VMINPS       X2, X0, X0; \
	VEXTRACTF128 $1, Y1, X2; \
	VMAXPS       X2, X1, X1; \
	VPERMILPS    $0x4e, X1, X2; \
	VMAXPS       X2, X1, X1; \
	VPERMILPS    $0xb1, X1, X2; \
	VMAXPS       X2, X1, X1

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
	MINMAXREDUCE
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

// func quantRowAVX512(dst *byte, x *float32, n int, inv, zf float32)
//
// quantRowAVX2's codes, 16 at a time, for n a positive multiple of 16:
// negative sums go to 0 before VPMOVUSDB saturates the rest at 255, as
// VPACKSSDW then VPACKUSWB clamp them.
TEXT ·quantRowAVX512(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS inv+24(FP), Z1
	VBROADCASTSS zf+28(FP), Z2
	VPXORD       Z3, Z3, Z3
	SHRQ         $4, CX

q512loop:
	VMULPS    (SI), Z1, Z0
	VADDPS    Z2, Z0, Z0
	VCVTPS2DQ Z0, Z0
	VPMAXSD   Z3, Z0, Z0
	VPMOVUSDB Z0, (DI)
	ADDQ      $64, SI
	ADDQ      $16, DI
	DECQ      CX
	JNZ       q512loop
	VZEROUPPER
	RET

// func minMaxAVX512(x *float32, n int) (lo, hi float32)
//
// The least and greatest of x[0:n], n a positive multiple of 32, in two
// pairs of accumulators.
TEXT ·minMaxAVX512(SB), NOSPLIT, $0-24
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z2
	VMOVAPS Z0, Z1
	VMOVAPS Z2, Z3
	ADDQ    $128, SI
	SUBQ    $32, CX
	JZ      mm512reduce

mm512loop:
	VMOVUPS (SI), Z4
	VMOVUPS 64(SI), Z5
	VMINPS  Z4, Z0, Z0
	VMAXPS  Z4, Z1, Z1
	VMINPS  Z5, Z2, Z2
	VMAXPS  Z5, Z3, Z3
	ADDQ    $128, SI
	SUBQ    $32, CX
	JNZ     mm512loop

mm512reduce:
	VMINPS        Z2, Z0, Z0
	VMAXPS        Z3, Z1, Z1
	VEXTRACTF32X8 $1, Z0, Y2
	VMINPS        Y2, Y0, Y0
	VEXTRACTF32X8 $1, Z1, Y3
	VMAXPS        Y3, Y1, Y1
	MINMAXREDUCE
	VMOVSS        X0, lo+16(FP)
	VMOVSS        X1, hi+20(FP)
	VZEROUPPER
	RET

// func absMaxRowsAVX512(peak, x *float32, n, ld, rows int)
//
// peak[i] = max(peak[i], |x[r·ld+i]|) over rows r < rows (positive), for
// i < n, n a positive multiple of 16: each block of columns kept in
// registers down the rows, four blocks at a time while n allows.
TEXT ·absMaxRowsAVX512(SB), NOSPLIT, $0-40
	MOVQ         peak+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), R10
	MOVQ         ld+24(FP), R8
	MOVQ         rows+32(FP), R9
	MOVL         $0x7fffffff, AX
	VPBROADCASTD AX, Z31
	SHLQ         $2, R8  // a row's bytes
	SHLQ         $2, R10 // bytes of columns left

am4:
	CMPQ    R10, $256
	JLT     am1
	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z1
	VMOVUPS 128(DI), Z2
	VMOVUPS 192(DI), Z3
	MOVQ    SI, R11
	MOVQ    R9, CX

am4rows:
	VANDPS (R11), Z31, Z4
	VANDPS 64(R11), Z31, Z5
	VANDPS 128(R11), Z31, Z6
	VANDPS 192(R11), Z31, Z7
	VMAXPS Z4, Z0, Z0
	VMAXPS Z5, Z1, Z1
	VMAXPS Z6, Z2, Z2
	VMAXPS Z7, Z3, Z3
	ADDQ   R8, R11
	DECQ   CX
	JNZ    am4rows
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ    $256, DI
	ADDQ    $256, SI
	SUBQ    $256, R10
	JMP     am4

am1:
	TESTQ   R10, R10
	JZ      amdone
	VMOVUPS (DI), Z0
	MOVQ    SI, R11
	MOVQ    R9, CX

am1rows:
	VANDPS (R11), Z31, Z4
	VMAXPS Z4, Z0, Z0
	ADDQ   R8, R11
	DECQ   CX
	JNZ    am1rows
	VMOVUPS Z0, (DI)
	ADDQ    $64, DI
	ADDQ    $64, SI
	SUBQ    $64, R10
	JMP     am1

amdone:
	VZEROUPPER
	RET

// func dequantPanelsAVX512(dst *float32, ldd int, codes, scales *byte, pl, shift, panels int)
//
// For p < panels: the 16 floats at dst + p·ldd (bytes) are the int8 codes
// in byte shift/8 of the 16 dwords at codes + p·pl, times the 16 float32
// scales at scales + p·pl: one input channel's weights of panels of int8
// packed columns, scaled back to float32 (a single rounding, as Go's
// float32(int8(code))·scale).
TEXT ·dequantPanelsAVX512(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	MOVQ codes+16(FP), SI
	MOVQ scales+24(FP), DX
	MOVQ pl+32(FP), R9
	MOVQ shift+40(FP), AX
	MOVQ panels+48(FP), CX
	MOVQ $24, BX
	SUBQ AX, BX
	VMOVQ BX, X1 // the code's byte moved to the top, then back with its sign

dqloop:
	VMOVDQU32 (SI), Z0
	VPSLLD    X1, Z0, Z0
	VPSRAD    $24, Z0, Z0
	VCVTDQ2PS Z0, Z0
	VMULPS    (DX), Z0, Z0
	VMOVUPS   Z0, (DI)
	ADDQ      R9, SI
	ADDQ      R9, DX
	ADDQ      R8, DI
	DECQ      CX
	JNZ       dqloop
	VZEROUPPER
	RET

// func outlierRowsAVX512(y *float32, ldy int, a *float32, c int, w *float32, n, rows int)
//
// For r < rows and j < n: y[r·ldy+j] += Σ a[r·c+i]·w[(j/16·c+i)·16+j%16]
// over i < c (c ≥ 1), the sum from zero by FMA in the order of i, as the
// float32 kernels sum, then added to y: an int8 product's outlier
// channels (a, rows by c) times their weights packed as packInt8Columns
// packs them, the last panel's columns past n masked.
TEXT ·outlierRowsAVX512(SB), NOSPLIT, $0-56
	MOVQ  y+0(FP), DI
	MOVQ  ldy+8(FP), R8
	SHLQ  $2, R8 // a row of y's bytes
	MOVQ  a+16(FP), SI
	MOVQ  c+24(FP), R9
	MOVQ  rows+48(FP), R11
	MOVQ  n+40(FP), CX
	ANDQ  $15, CX
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1 // the ragged panel's columns; none if n is whole panels

orow:
	MOVQ DI, R13
	MOVQ w+32(FP), R14
	MOVQ n+40(FP), BX
	SHRQ $4, BX
	TESTQ BX, BX
	JZ   oragged

opanel:
	VPXORD Z0, Z0, Z0
	MOVQ   SI, AX
	MOVQ   R14, DX
	MOVQ   R9, CX

ochan:
	VBROADCASTSS (AX), Z1
	VFMADD231PS  (DX), Z1, Z0
	ADDQ         $4, AX
	ADDQ         $64, DX
	DECQ         CX
	JNZ          ochan
	VADDPS       (R13), Z0, Z0
	VMOVUPS      Z0, (R13)
	ADDQ         $64, R13
	MOVQ         DX, R14 // the next panel follows this one's c rows
	DECQ         BX
	JNZ          opanel

oragged:
	KORTESTW K1, K1
	JZ       onext
	VPXORD   Z0, Z0, Z0
	MOVQ     SI, AX
	MOVQ     R14, DX
	MOVQ     R9, CX

ochan1:
	VBROADCASTSS (AX), Z1
	VFMADD231PS  (DX), Z1, Z0
	ADDQ         $4, AX
	ADDQ         $64, DX
	DECQ         CX
	JNZ          ochan1
	VMOVUPS.Z    (R13), K1, Z2
	VADDPS       Z2, Z0, Z0
	VMOVUPS      Z0, K1, (R13)

onext:
	ADDQ R8, DI
	LEAQ (SI)(R9*4), SI
	DECQ R11
	JNZ  orow
	VZEROUPPER
	RET

// func dotsInt8AVX2(q *int8, rows *int8, stride int, n int, count int, out *int32)
//
// out[r] = Σ q[i]·rows[r·stride+i] over i < n for r < count, n a positive
// multiple of 32, count positive, the rows' codes in [-127, 127] (q's
// any int8): VPMADDUBSW multiplies |q| (unsigned) by each row's codes
// given q's signs (VPSIGNB), pairs summed in int16 (at most 2·128·127, so
// exact) and then in int32, 32 codes in four instructions where sign
// extension took eight. Rows are read one after the other, as the
// hardware prefetcher follows best (two rows a step, sharing q's load,
// ran slower over rows from memory).
TEXT ·dotsInt8AVX2(SB), NOSPLIT, $0-48
	MOVQ    q+0(FP), SI
	MOVQ    rows+8(FP), DI
	MOVQ    stride+16(FP), DX
	MOVQ    n+24(FP), BX
	MOVQ    count+32(FP), R8
	MOVQ    out+40(FP), R9
	VMOVDQU ones16<>(SB), Y7

drow:
	XORQ  AX, AX
	VPXOR Y0, Y0, Y0

dloop:
	VMOVDQU    (SI)(AX*1), Y2
	VPABSB     Y2, Y3
	VMOVDQU    (DI)(AX*1), Y4
	VPSIGNB    Y2, Y4, Y4
	VPMADDUBSW Y4, Y3, Y4
	VPMADDWD   Y7, Y4, Y4
	VPADDD     Y4, Y0, Y0
	ADDQ       $32, AX
	CMPQ       AX, BX
	JLT        dloop

	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, (R9)
	ADDQ         $4, R9
	ADDQ         DX, DI
	DECQ         R8
	JNZ          drow
	VZEROUPPER
	RET

// DOTQ adds to ACC the products of the 32 codes of a query at (QP)(AX*1)
// with the row's in Y4, as dotsInt8AVX2 does, using T1 and T2.
#define DOTQ(QP, T1, T2, ACC) \
	VMOVDQU    (QP)(AX*1), T1; \
	VPABSB     T1, T2;         \
	VPSIGNB    T1, Y4, T1;     \
	VPMADDUBSW T1, T2, T1;     \
	VPMADDWD   Y15, T1, T1;    \
	VPADDD     T1, ACC, ACC

// func dotsInt8AVX2Four(q *[4]*int8, rows *int8, stride int, n int, count int, out *[4]*int32)
//
// out[j][r] = Σ q[j][i]·rows[r·stride+i] over i < n for four queries j and
// r < count, n a positive multiple of 32, count positive, the rows' codes
// in [-127, 127]: dotsInt8AVX2's arithmetic with each row's 32 codes read
// once for the four queries, the four sums added across lanes together.
TEXT ·dotsInt8AVX2Four(SB), NOSPLIT, $0-48
	MOVQ    q+0(FP), AX
	MOVQ    0(AX), R10
	MOVQ    8(AX), R11
	MOVQ    16(AX), R12
	MOVQ    24(AX), R13
	MOVQ    out+40(FP), AX
	MOVQ    0(AX), SI
	MOVQ    8(AX), BX
	MOVQ    16(AX), R14
	MOVQ    24(AX), R9
	MOVQ    rows+8(FP), DI
	MOVQ    stride+16(FP), DX
	MOVQ    n+24(FP), CX
	MOVQ    count+32(FP), R8
	VMOVDQU ones16<>(SB), Y15

frow:
	XORQ  AX, AX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3

floop:
	VMOVDQU (DI)(AX*1), Y4
	DOTQ(R10, Y5, Y6, Y0)
	DOTQ(R11, Y7, Y8, Y1)
	DOTQ(R12, Y9, Y10, Y2)
	DOTQ(R13, Y11, Y12, Y3)
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     floop

	// Each accumulator's eight lanes summed, the four sums side by side in X0.
	VPHADDD      Y1, Y0, Y0
	VPHADDD      Y3, Y2, Y2
	VPHADDD      Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, (SI)
	VPEXTRD      $1, X0, (BX)
	VPEXTRD      $2, X0, (R14)
	VPEXTRD      $3, X0, (R9)
	ADDQ         $4, SI
	ADDQ         $4, BX
	ADDQ         $4, R14
	ADDQ         $4, R9
	ADDQ         DX, DI
	DECQ         R8
	JNZ          frow
	VZEROUPPER
	RET
