#include "textflag.h"

// AVX2+FMA versions of the encoder's element-wise steps, for CPUs without
// AVX-512 (fastmath.go and bert.go hold the Go definitions they are tested
// against). Each takes 8 floats at a time over n, a positive multiple of 8;
// vecmath_avx2.go hands the last n mod 8 to Go.

// The constants, each 8 copies wide so that it can be an operand as it is.
// m87: -87, below which expf is 0
DATA ym87<>+0(SB)/4, $0xc2ae0000
DATA ym87<>+4(SB)/4, $0xc2ae0000
DATA ym87<>+8(SB)/4, $0xc2ae0000
DATA ym87<>+12(SB)/4, $0xc2ae0000
DATA ym87<>+16(SB)/4, $0xc2ae0000
DATA ym87<>+20(SB)/4, $0xc2ae0000
DATA ym87<>+24(SB)/4, $0xc2ae0000
DATA ym87<>+28(SB)/4, $0xc2ae0000
GLOBL ym87<>(SB), RODATA|NOPTR, $32
// log2e: log2 e
DATA ylog2e<>+0(SB)/4, $0x3fb8aa3b
DATA ylog2e<>+4(SB)/4, $0x3fb8aa3b
DATA ylog2e<>+8(SB)/4, $0x3fb8aa3b
DATA ylog2e<>+12(SB)/4, $0x3fb8aa3b
DATA ylog2e<>+16(SB)/4, $0x3fb8aa3b
DATA ylog2e<>+20(SB)/4, $0x3fb8aa3b
DATA ylog2e<>+24(SB)/4, $0x3fb8aa3b
DATA ylog2e<>+28(SB)/4, $0x3fb8aa3b
GLOBL ylog2e<>(SB), RODATA|NOPTR, $32
// one: 1
DATA yone<>+0(SB)/4, $0x3f800000
DATA yone<>+4(SB)/4, $0x3f800000
DATA yone<>+8(SB)/4, $0x3f800000
DATA yone<>+12(SB)/4, $0x3f800000
DATA yone<>+16(SB)/4, $0x3f800000
DATA yone<>+20(SB)/4, $0x3f800000
DATA yone<>+24(SB)/4, $0x3f800000
DATA yone<>+28(SB)/4, $0x3f800000
GLOBL yone<>(SB), RODATA|NOPTR, $32
// c1: ln 2
DATA yc1<>+0(SB)/4, $0x3f317218
DATA yc1<>+4(SB)/4, $0x3f317218
DATA yc1<>+8(SB)/4, $0x3f317218
DATA yc1<>+12(SB)/4, $0x3f317218
DATA yc1<>+16(SB)/4, $0x3f317218
DATA yc1<>+20(SB)/4, $0x3f317218
DATA yc1<>+24(SB)/4, $0x3f317218
DATA yc1<>+28(SB)/4, $0x3f317218
GLOBL yc1<>(SB), RODATA|NOPTR, $32
// c2: ln² 2 / 2!
DATA yc2<>+0(SB)/4, $0x3e75fdf0
DATA yc2<>+4(SB)/4, $0x3e75fdf0
DATA yc2<>+8(SB)/4, $0x3e75fdf0
DATA yc2<>+12(SB)/4, $0x3e75fdf0
DATA yc2<>+16(SB)/4, $0x3e75fdf0
DATA yc2<>+20(SB)/4, $0x3e75fdf0
DATA yc2<>+24(SB)/4, $0x3e75fdf0
DATA yc2<>+28(SB)/4, $0x3e75fdf0
GLOBL yc2<>(SB), RODATA|NOPTR, $32
// c3
DATA yc3<>+0(SB)/4, $0x3d635847
DATA yc3<>+4(SB)/4, $0x3d635847
DATA yc3<>+8(SB)/4, $0x3d635847
DATA yc3<>+12(SB)/4, $0x3d635847
DATA yc3<>+16(SB)/4, $0x3d635847
DATA yc3<>+20(SB)/4, $0x3d635847
DATA yc3<>+24(SB)/4, $0x3d635847
DATA yc3<>+28(SB)/4, $0x3d635847
GLOBL yc3<>(SB), RODATA|NOPTR, $32
// c4
DATA yc4<>+0(SB)/4, $0x3c1d955b
DATA yc4<>+4(SB)/4, $0x3c1d955b
DATA yc4<>+8(SB)/4, $0x3c1d955b
DATA yc4<>+12(SB)/4, $0x3c1d955b
DATA yc4<>+16(SB)/4, $0x3c1d955b
DATA yc4<>+20(SB)/4, $0x3c1d955b
DATA yc4<>+24(SB)/4, $0x3c1d955b
DATA yc4<>+28(SB)/4, $0x3c1d955b
GLOBL yc4<>(SB), RODATA|NOPTR, $32
// c5
DATA yc5<>+0(SB)/4, $0x3aaec3ff
DATA yc5<>+4(SB)/4, $0x3aaec3ff
DATA yc5<>+8(SB)/4, $0x3aaec3ff
DATA yc5<>+12(SB)/4, $0x3aaec3ff
DATA yc5<>+16(SB)/4, $0x3aaec3ff
DATA yc5<>+20(SB)/4, $0x3aaec3ff
DATA yc5<>+24(SB)/4, $0x3aaec3ff
DATA yc5<>+28(SB)/4, $0x3aaec3ff
GLOBL yc5<>(SB), RODATA|NOPTR, $32
// c6
DATA yc6<>+0(SB)/4, $0x39218489
DATA yc6<>+4(SB)/4, $0x39218489
DATA yc6<>+8(SB)/4, $0x39218489
DATA yc6<>+12(SB)/4, $0x39218489
DATA yc6<>+16(SB)/4, $0x39218489
DATA yc6<>+20(SB)/4, $0x39218489
DATA yc6<>+24(SB)/4, $0x39218489
DATA yc6<>+28(SB)/4, $0x39218489
GLOBL yc6<>(SB), RODATA|NOPTR, $32
// rsqrt2: 1/√2
DATA yrsqrt2<>+0(SB)/4, $0x3f3504f3
DATA yrsqrt2<>+4(SB)/4, $0x3f3504f3
DATA yrsqrt2<>+8(SB)/4, $0x3f3504f3
DATA yrsqrt2<>+12(SB)/4, $0x3f3504f3
DATA yrsqrt2<>+16(SB)/4, $0x3f3504f3
DATA yrsqrt2<>+20(SB)/4, $0x3f3504f3
DATA yrsqrt2<>+24(SB)/4, $0x3f3504f3
DATA yrsqrt2<>+28(SB)/4, $0x3f3504f3
GLOBL yrsqrt2<>(SB), RODATA|NOPTR, $32
// p: erf: p = 0.3275911
DATA yp<>+0(SB)/4, $0x3ea7ba05
DATA yp<>+4(SB)/4, $0x3ea7ba05
DATA yp<>+8(SB)/4, $0x3ea7ba05
DATA yp<>+12(SB)/4, $0x3ea7ba05
DATA yp<>+16(SB)/4, $0x3ea7ba05
DATA yp<>+20(SB)/4, $0x3ea7ba05
DATA yp<>+24(SB)/4, $0x3ea7ba05
DATA yp<>+28(SB)/4, $0x3ea7ba05
GLOBL yp<>(SB), RODATA|NOPTR, $32
// a1: a1 = 0.254829592
DATA ya1<>+0(SB)/4, $0x3e827906
DATA ya1<>+4(SB)/4, $0x3e827906
DATA ya1<>+8(SB)/4, $0x3e827906
DATA ya1<>+12(SB)/4, $0x3e827906
DATA ya1<>+16(SB)/4, $0x3e827906
DATA ya1<>+20(SB)/4, $0x3e827906
DATA ya1<>+24(SB)/4, $0x3e827906
DATA ya1<>+28(SB)/4, $0x3e827906
GLOBL ya1<>(SB), RODATA|NOPTR, $32
// a2: a2 = -0.284496736
DATA ya2<>+0(SB)/4, $0xbe91a98e
DATA ya2<>+4(SB)/4, $0xbe91a98e
DATA ya2<>+8(SB)/4, $0xbe91a98e
DATA ya2<>+12(SB)/4, $0xbe91a98e
DATA ya2<>+16(SB)/4, $0xbe91a98e
DATA ya2<>+20(SB)/4, $0xbe91a98e
DATA ya2<>+24(SB)/4, $0xbe91a98e
DATA ya2<>+28(SB)/4, $0xbe91a98e
GLOBL ya2<>(SB), RODATA|NOPTR, $32
// a3: a3 = 1.421413741
DATA ya3<>+0(SB)/4, $0x3fb5f0e3
DATA ya3<>+4(SB)/4, $0x3fb5f0e3
DATA ya3<>+8(SB)/4, $0x3fb5f0e3
DATA ya3<>+12(SB)/4, $0x3fb5f0e3
DATA ya3<>+16(SB)/4, $0x3fb5f0e3
DATA ya3<>+20(SB)/4, $0x3fb5f0e3
DATA ya3<>+24(SB)/4, $0x3fb5f0e3
DATA ya3<>+28(SB)/4, $0x3fb5f0e3
GLOBL ya3<>(SB), RODATA|NOPTR, $32
// a4: a4 = -1.453152027
DATA ya4<>+0(SB)/4, $0xbfba00e3
DATA ya4<>+4(SB)/4, $0xbfba00e3
DATA ya4<>+8(SB)/4, $0xbfba00e3
DATA ya4<>+12(SB)/4, $0xbfba00e3
DATA ya4<>+16(SB)/4, $0xbfba00e3
DATA ya4<>+20(SB)/4, $0xbfba00e3
DATA ya4<>+24(SB)/4, $0xbfba00e3
DATA ya4<>+28(SB)/4, $0xbfba00e3
GLOBL ya4<>(SB), RODATA|NOPTR, $32
// a5: a5 = 1.061405429
DATA ya5<>+0(SB)/4, $0x3f87dc22
DATA ya5<>+4(SB)/4, $0x3f87dc22
DATA ya5<>+8(SB)/4, $0x3f87dc22
DATA ya5<>+12(SB)/4, $0x3f87dc22
DATA ya5<>+16(SB)/4, $0x3f87dc22
DATA ya5<>+20(SB)/4, $0x3f87dc22
DATA ya5<>+24(SB)/4, $0x3f87dc22
DATA ya5<>+28(SB)/4, $0x3f87dc22
GLOBL ya5<>(SB), RODATA|NOPTR, $32
// abs: |x| mask
DATA yabs<>+0(SB)/4, $0x7fffffff
DATA yabs<>+4(SB)/4, $0x7fffffff
DATA yabs<>+8(SB)/4, $0x7fffffff
DATA yabs<>+12(SB)/4, $0x7fffffff
DATA yabs<>+16(SB)/4, $0x7fffffff
DATA yabs<>+20(SB)/4, $0x7fffffff
DATA yabs<>+24(SB)/4, $0x7fffffff
DATA yabs<>+28(SB)/4, $0x7fffffff
GLOBL yabs<>(SB), RODATA|NOPTR, $32
// sign: sign mask
DATA ysign<>+0(SB)/4, $0x80000000
DATA ysign<>+4(SB)/4, $0x80000000
DATA ysign<>+8(SB)/4, $0x80000000
DATA ysign<>+12(SB)/4, $0x80000000
DATA ysign<>+16(SB)/4, $0x80000000
DATA ysign<>+20(SB)/4, $0x80000000
DATA ysign<>+24(SB)/4, $0x80000000
DATA ysign<>+28(SB)/4, $0x80000000
GLOBL ysign<>(SB), RODATA|NOPTR, $32
// half: 0.5
DATA yhalf<>+0(SB)/4, $0x3f000000
DATA yhalf<>+4(SB)/4, $0x3f000000
DATA yhalf<>+8(SB)/4, $0x3f000000
DATA yhalf<>+12(SB)/4, $0x3f000000
DATA yhalf<>+16(SB)/4, $0x3f000000
DATA yhalf<>+20(SB)/4, $0x3f000000
DATA yhalf<>+24(SB)/4, $0x3f000000
DATA yhalf<>+28(SB)/4, $0x3f000000
GLOBL yhalf<>(SB), RODATA|NOPTR, $32

// EXP8 replaces x (in X) by e^x as expf computes it, for x ≤ 88.7:
// e^x = 2^n · 2^f with n = round(x·log2 e), by the same degree-6
// polynomial in f, scaled by 2^n by adding n to its exponent; inputs below
// -87 are raised to -87 (e^-87 ≈ 1.6e-38 where expf gives 0). T1, T2 are
// clobbered.
#define EXP8(X, T1, T2) \
	VMAXPS       ym87<>(SB), X, X; \
	VMULPS       ylog2e<>(SB), X, T1; \
	VROUNDPS     $0, T1, T2; \
	VSUBPS       T2, T1, T1; \
	VMOVUPS      yc6<>(SB), X; \
	VFMADD213PS  yc5<>(SB), T1, X; \
	VFMADD213PS  yc4<>(SB), T1, X; \
	VFMADD213PS  yc3<>(SB), T1, X; \
	VFMADD213PS  yc2<>(SB), T1, X; \
	VFMADD213PS  yc1<>(SB), T1, X; \
	VFMADD213PS  yone<>(SB), T1, X; \
	VCVTPS2DQ    T2, T2; \
	VPSLLD       $23, T2, T2; \
	VPADDD       T2, X, X

// func maxAVX2(row *float32, n int) float32
TEXT ·maxAVX2(SB), NOSPLIT, $0-20
	MOVQ    row+0(FP), SI
	MOVQ    n+8(FP), CX
	SHRQ    $3, CX
	VMOVUPS (SI), Y0
	ADDQ    $32, SI
	DECQ    CX
	JZ      maxdone

maxloop:
	VMAXPS (SI), Y0, Y0
	ADDQ   $32, SI
	DECQ   CX
	JNZ    maxloop

maxdone:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+16(FP)
	RET

// func expSumAVX2(row *float32, n int, max, scale float32) float32
//
// row[0:n] = e^((x - max)·scale) in place; returns their sum.
TEXT ·expSumAVX2(SB), NOSPLIT, $0-28
	MOVQ         row+0(FP), SI
	MOVQ         n+8(FP), CX
	SHRQ         $3, CX
	VBROADCASTSS max+16(FP), Y14
	VBROADCASTSS scale+20(FP), Y15
	VXORPS       Y13, Y13, Y13

exploop:
	VMOVUPS (SI), Y0
	VSUBPS  Y14, Y0, Y0
	VMULPS  Y15, Y0, Y0
	EXP8(Y0, Y1, Y2)
	VMOVUPS Y0, (SI)
	VADDPS  Y0, Y13, Y13
	ADDQ    $32, SI
	DECQ    CX
	JNZ     exploop

	VEXTRACTF128 $1, Y13, X1
	VADDPS       X1, X13, X0
	VPERMILPS    $0x4e, X0, X1
	VADDPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VADDPS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func addGELUAVX2(dst, src *float32, n int, gelu bool)
//
// dst[0:n] += src[0:n], then, if gelu, dst = gelu(dst) as geluGo computes
// it: 0.5·v·(1 + erf(v/√2)), erf by Abramowitz and Stegun 7.1.26.
TEXT ·addGELUAVX2(SB), NOSPLIT, $0-25
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  n+16(FP), CX
	SHRQ  $3, CX
	MOVBQZX gelu+24(FP), DX

addloop:
	VMOVUPS (DI), Y0
	VADDPS  (SI), Y0, Y0
	TESTQ   DX, DX
	JZ      store
	VMULPS       yrsqrt2<>(SB), Y0, Y1 // x = v/√2
	VANDPS       yabs<>(SB), Y1, Y2    // |x|
	VANDPS       ysign<>(SB), Y1, Y3   // its sign
	VMOVUPS      yp<>(SB), Y4
	VFMADD213PS  yone<>(SB), Y2, Y4    // 1 + p·|x|
	VMOVUPS      yone<>(SB), Y5
	VDIVPS       Y4, Y5, Y5            // t
	VMOVUPS      ya5<>(SB), Y6
	VFMADD213PS  ya4<>(SB), Y5, Y6
	VFMADD213PS  ya3<>(SB), Y5, Y6
	VFMADD213PS  ya2<>(SB), Y5, Y6
	VFMADD213PS  ya1<>(SB), Y5, Y6
	VMULPS       Y5, Y6, Y6            // the polynomial in t
	VMULPS       Y2, Y2, Y7
	VXORPS       ysign<>(SB), Y7, Y7   // -x²
	EXP8(Y7, Y8, Y9)
	VFNMADD213PS yone<>(SB), Y7, Y6    // erf(|x|) = 1 - poly·e^(-x²)
	VORPS        Y3, Y6, Y6            // erf(x)
	VADDPS       yone<>(SB), Y6, Y6
	VMULPS       Y0, Y6, Y6
	VMULPS       yhalf<>(SB), Y6, Y0

store:
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	DECQ    CX
	JNZ     addloop
	VZEROUPPER
	RET

// func halfToFloatF16C(dst *float32, src *uint16, n int)
//
// Widens the IEEE half values src[0:n] into dst[0:n], exactly; n is a
// positive multiple of 16.
TEXT ·halfToFloatF16C(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX

halfloop:
	VCVTPH2PS (SI), Y0
	VCVTPH2PS 16(SI), Y1
	VMOVUPS   Y0, (DI)
	VMOVUPS   Y1, 32(DI)
	ADDQ      $32, SI
	ADDQ      $64, DI
	DECQ      CX
	JNZ       halfloop
	VZEROUPPER
	RET

// HSUM8Y0 sums the eight floats of Y0 into X0's lowest (X1 is scratch).
#define HSUM8Y0 \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS       X1, X0, X0; \
	VPERMILPS    $0x4e, X0, X1; \
	VADDPS       X1, X0, X0; \
	VPERMILPS    $0xb1, X0, X1; \
	VADDPS       X1, X0, X0

// func residualNormAVX2(x, y, b, gamma, beta *float32, h int, eps, invH float32)
//
// One row: x[0:h] = LayerNorm(x + y + b) with gamma and beta, h a positive
// multiple of 8 and invH = 1/h, as residualNormAVX512: the sum and its
// mean, then the variance about the mean, then the affine map.
TEXT ·residualNormAVX2(SB), NOSPLIT, $0-56
	MOVQ   x+0(FP), DI
	MOVQ   y+8(FP), SI
	MOVQ   b+16(FP), R8
	MOVQ   gamma+24(FP), R9
	MOVQ   beta+32(FP), R10
	MOVQ   h+40(FP), DX
	SHLQ   $2, DX
	VXORPS Y0, Y0, Y0
	XORQ   AX, AX

rnsum:
	VMOVUPS (DI)(AX*1), Y2
	VADDPS  (SI)(AX*1), Y2, Y2
	VADDPS  (R8)(AX*1), Y2, Y2
	VMOVUPS Y2, (DI)(AX*1)
	VADDPS  Y2, Y0, Y0
	ADDQ    $32, AX
	CMPQ    AX, DX
	JLT     rnsum
	HSUM8Y0
	VMULSS       invH+52(FP), X0, X0
	VBROADCASTSS X0, Y14 // mean

	VXORPS Y0, Y0, Y0
	XORQ   AX, AX

rnvariance:
	VMOVUPS     (DI)(AX*1), Y2
	VSUBPS      Y14, Y2, Y2
	VFMADD231PS Y2, Y2, Y0
	ADDQ        $32, AX
	CMPQ        AX, DX
	JLT         rnvariance
	HSUM8Y0
	VMULSS       invH+52(FP), X0, X0
	VADDSS       eps+48(FP), X0, X0
	VSQRTSS      X0, X0, X0
	VMOVSS       yone<>(SB), X1
	VDIVSS       X0, X1, X0
	VBROADCASTSS X0, Y13 // 1/sqrt(variance + eps)
	XORQ         AX, AX

rnaffine:
	VMOVUPS (DI)(AX*1), Y2
	VSUBPS  Y14, Y2, Y2
	VMULPS  Y13, Y2, Y2
	VMULPS  (R9)(AX*1), Y2, Y2
	VADDPS  (R10)(AX*1), Y2, Y2
	VMOVUPS Y2, (DI)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, DX
	JLT     rnaffine
	VZEROUPPER
	RET
