#include "textflag.h"

// AVX-512 versions of the encoder's element-wise steps (fastmath.go and
// bert.go hold the Go definitions they are tested against). Each takes 16
// floats at a time; the last n mod 16 go through a mask (K1), so any n ≥ 1
// is handled without reading or writing past the slice.

// The constants, each broadcast from here.
DATA vconst<>+0(SB)/4, $0x3fb8aa3b  // log2 e
DATA vconst<>+4(SB)/4, $0xc2ae0000  // -87, below which expf is 0
DATA vconst<>+8(SB)/4, $0x3f800000  // 1
DATA vconst<>+12(SB)/4, $0x3f317218 // c1 = ln 2
DATA vconst<>+16(SB)/4, $0x3e75fdf0 // c2 = ln² 2 / 2!
DATA vconst<>+20(SB)/4, $0x3d635847 // c3
DATA vconst<>+24(SB)/4, $0x3c1d955b // c4
DATA vconst<>+28(SB)/4, $0x3aaec3ff // c5
DATA vconst<>+32(SB)/4, $0x39218489 // c6
DATA vconst<>+36(SB)/4, $0x3f3504f3 // 1/√2
DATA vconst<>+40(SB)/4, $0x3ea7ba05 // erf: p = 0.3275911
DATA vconst<>+44(SB)/4, $0x3e827906 // a1 = 0.254829592
DATA vconst<>+48(SB)/4, $0xbe91a98e // a2 = -0.284496736
DATA vconst<>+52(SB)/4, $0x3fb5f0e3 // a3 = 1.421413741
DATA vconst<>+56(SB)/4, $0xbfba00e3 // a4 = -1.453152027
DATA vconst<>+60(SB)/4, $0x3f87dc22 // a5 = 1.061405429
DATA vconst<>+64(SB)/4, $0x7fffffff // |x| mask
DATA vconst<>+68(SB)/4, $0x80000000 // sign mask
DATA vconst<>+72(SB)/4, $0x3f000000 // 0.5
DATA vconst<>+76(SB)/4, $0xff800000 // -Inf
GLOBL vconst<>(SB), RODATA|NOPTR, $80

// LOADEXP broadcasts exp's constants into Z20..Z28.
#define LOADEXP \
	VBROADCASTSS vconst<>+0(SB), Z20; \
	VBROADCASTSS vconst<>+4(SB), Z21; \
	VBROADCASTSS vconst<>+8(SB), Z22; \
	VBROADCASTSS vconst<>+12(SB), Z23; \
	VBROADCASTSS vconst<>+16(SB), Z24; \
	VBROADCASTSS vconst<>+20(SB), Z25; \
	VBROADCASTSS vconst<>+24(SB), Z26; \
	VBROADCASTSS vconst<>+28(SB), Z27; \
	VBROADCASTSS vconst<>+32(SB), Z28

// EXP replaces x (in X) by e^x as expf computes it, for x ≤ 88.7:
// e^x = 2^n · 2^f with n = round(x·log2 e), by the same degree-6
// polynomial in f, scaled by 2^n with VSCALEFPS; inputs below -87 are
// raised to -87 (e^-87 ≈ 1.6e-38 where expf gives 0). T1, T2 are clobbered.
#define EXP(X, T1, T2) \
	EXPSPLIT(X, T1, T2); \
	VMOVAPS      Z28, X; \
	VFMADD213PS  Z27, T1, X; \
	VFMADD213PS  Z26, T1, X; \
	EXPLOW(X, T1, T2)

// EXP4 is EXP with the polynomial's first four terms (relative error
// below 5e-5, under a hundredth of a bfloat16 step), for exponentials
// rounded to bfloat16 afterwards.
#define EXP4(X, T1, T2) \
	EXPSPLIT(X, T1, T2); \
	VMOVAPS      Z26, X; \
	EXPLOW(X, T1, T2)

// EXPSPLIT raises x to -87 and splits x·log2 e into n (T2) and f (T1).
#define EXPSPLIT(X, T1, T2) \
	VMAXPS       Z21, X, X; \
	VMULPS       Z20, X, T1; \
	VRNDSCALEPS  $0, T1, T2; \
	VSUBPS       T2, T1, T1

// EXPLOW ends the polynomial from its degree-4 coefficient on (X holds
// the sum so far) and scales it by 2^n.
#define EXPLOW(X, T1, T2) \
	VFMADD213PS  Z25, T1, X; \
	VFMADD213PS  Z24, T1, X; \
	VFMADD213PS  Z23, T1, X; \
	VFMADD213PS  Z22, T1, X; \
	VSCALEFPS    T2, X, X

// TAILMASK sets K1 to the low (n mod 16) lanes, from n in R, using AX, CX.
#define TAILMASK(R) \
	MOVQ  R, CX; \
	ANDQ  $15, CX; \
	MOVL  $1, AX; \
	SHLL  CX, AX; \
	DECL  AX; \
	KMOVW AX, K1

// HREDUCE0 folds Z0's 16 lanes with OP (VADDPS: their sum, VMAXPS:
// their maximum) into X0's lowest, clobbering X1.
#define HREDUCE0(OP) \
	VEXTRACTF64X4 $1, Z0, Y1; \
	OP            Y1, Y0, Y0; \
	VEXTRACTF128  $1, Y0, X1; \
	OP            X1, X0, X0; \
	VPERMILPS     $0x4e, X0, X1; \
	OP            X1, X0, X0; \
	VPERMILPS     $0xb1, X0, X1; \
	OP            X1, X0, X0

// TOBF16 rounds Z's 16 floats to bfloat16, to nearest even as toBF16
// does, into Y (Z's low half), with 0x7fff in Z18 and 1 in Z19; T is
// clobbered.
#define TOBF16(Z, T, Y) \
	VPSRLD  $16, Z, T; \
	VPANDD  Z19, T, T; \
	VPADDD  Z18, Z, Z; \
	VPADDD  T, Z, Z; \
	VPSRLD  $16, Z, Z; \
	VPMOVDW Z, Y

// func expShiftedAVX512(row *float32, n int, scale float32, dst *uint16) float32
//
// e^(scale·(row[0:n] − max)), n ≥ 1, into row[0:n] in place, or with dst
// not nil rounded to bfloat16 into dst[0:n] (row only read; EXP4, enough
// for bf16, and the shift folded into an FMA), and returns
// the sum of the exponentials before any rounding: softmax(scale·row) but
// for the division by the sum, which the caller folds into what it
// multiplies the row by. Two blocks of 16 at a time, each with a sum of its
// own, so that the exponentials of one do not wait on the other's.
TEXT ·expShiftedAVX512(SB), NOSPLIT, $0-36
	MOVQ         row+0(FP), SI
	MOVQ         n+8(FP), BX
	VBROADCASTSS scale+16(FP), Z29
	MOVQ         dst+24(FP), DI
	LOADEXP
	MOVL         $0x7fff, AX
	VPBROADCASTD AX, Z18
	MOVL         $1, AX
	VPBROADCASTD AX, Z19
	TAILMASK(BX)
	MOVQ         BX, DX
	SHRQ         $4, DX        // full blocks

	// The maximum.
	VBROADCASTSS vconst<>+76(SB), Z0
	MOVQ         SI, R9
	MOVQ         DX, R8
	TESTQ        R8, R8
	JZ           maxtail

maxloop:
	VMAXPS (R9), Z0, Z0
	ADDQ   $64, R9
	DECQ   R8
	JNZ    maxloop

maxtail:
	VBROADCASTSS vconst<>+76(SB), Z1
	VMOVUPS      (R9), K1, Z1   // merge: lanes past n stay -Inf
	VMAXPS       Z1, Z0, Z0
	HREDUCE0(VMAXPS)
	VBROADCASTSS X0, Z30        // max

	// e^(scale·(x - max)), their sums, and the values stored.
	VXORPS Z31, Z31, Z31
	VXORPS Z6, Z6, Z6
	MOVQ   DX, R8
	SHRQ   $1, R8               // pairs of blocks
	TESTQ  DI, DI
	JNZ    rounded
	TESTQ  R8, R8
	JZ     expone

exploop:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z3
	VSUBPS  Z30, Z0, Z0
	VSUBPS  Z30, Z3, Z3
	VMULPS  Z29, Z0, Z0
	VMULPS  Z29, Z3, Z3
	EXP(Z0, Z1, Z2)
	EXP(Z3, Z4, Z5)
	VMOVUPS Z0, (SI)
	VMOVUPS Z3, 64(SI)
	VADDPS  Z0, Z31, Z31
	VADDPS  Z3, Z6, Z6
	ADDQ    $128, SI
	DECQ    R8
	JNZ     exploop

expone:
	TESTQ   $1, DX
	JZ      exptail
	VMOVUPS (SI), Z0
	VSUBPS  Z30, Z0, Z0
	VMULPS  Z29, Z0, Z0
	EXP(Z0, Z1, Z2)
	VMOVUPS Z0, (SI)
	VADDPS  Z0, Z31, Z31
	ADDQ    $64, SI

exptail:
	KORTESTW  K1, K1
	JZ        sum
	VMOVUPS.Z (SI), K1, Z0
	VSUBPS    Z30, Z0, Z0
	VMULPS    Z29, Z0, Z0
	EXP(Z0, Z1, Z2)
	VMOVUPS   Z0, K1, (SI)
	VADDPS    Z0, Z6, K1, Z6
	JMP       sum

	// Rounded to bf16 into dst: scale·x − scale·max in one FMA, and the
	// shorter polynomial.
rounded:
	VMULPS Z29, Z30, Z17
	TESTQ  R8, R8
	JZ     roundone

roundloop:
	VMOVUPS     (SI), Z0
	VMOVUPS     64(SI), Z3
	VFMSUB213PS Z17, Z29, Z0
	VFMSUB213PS Z17, Z29, Z3
	EXP4(Z0, Z1, Z2)
	EXP4(Z3, Z4, Z5)
	VADDPS      Z0, Z31, Z31
	VADDPS      Z3, Z6, Z6
	TOBF16(Z0, Z1, Y0)
	TOBF16(Z3, Z4, Y3)
	VMOVDQU     Y0, (DI)
	VMOVDQU     Y3, 32(DI)
	ADDQ        $128, SI
	ADDQ        $64, DI
	DECQ        R8
	JNZ         roundloop

roundone:
	TESTQ       $1, DX
	JZ          roundtail
	VMOVUPS     (SI), Z0
	VFMSUB213PS Z17, Z29, Z0
	EXP4(Z0, Z1, Z2)
	VADDPS      Z0, Z31, Z31
	TOBF16(Z0, Z1, Y0)
	VMOVDQU     Y0, (DI)
	ADDQ        $64, SI
	ADDQ        $32, DI

roundtail:
	KORTESTW    K1, K1
	JZ          sum
	VMOVUPS.Z   (SI), K1, Z0
	VFMSUB213PS Z17, Z29, Z0
	EXP4(Z0, Z1, Z2)
	VADDPS      Z0, Z6, K1, Z6
	TOBF16(Z0, Z1, Y0)
	VMOVDQU16   Y0, K1, (DI)

sum:
	VADDPS       Z6, Z31, Z0
	HREDUCE0(VADDPS)
	VMOVSS       X0, ret+32(FP)
	VZEROUPPER
	RET

// GELU replaces v (in V) by 0.5·v·(1 + erf(v/√2)), erf by Abramowitz and
// Stegun 7.1.26 as erff computes it: with z = v/√2, t = 1/(1 + p|z|),
// erf(|z|) = 1 - poly(t)·t·e^(-z²), and z's sign copied onto it. Z10..Z19
// hold its constants; T1..T4 and Z9 are clobbered.
#define GELU(V, T1, T2, T3, T4) \
	VMULPS      Z10, V, T1; \
	VANDPS      Z16, T1, T2; \
	VANDPS      Z17, T1, T1; \
	VMOVAPS     Z22, T3; \
	VFMADD231PS Z11, T2, T3; \
	VDIVPS      T3, Z22, T3; \
	VMULPS      T2, T2, T4; \
	VXORPS      Z17, T4, T4; \
	EXP(T4, T2, Z9); \
	VMOVAPS     Z15, T2; \
	VFMADD213PS Z14, T3, T2; \
	VFMADD213PS Z13, T3, T2; \
	VFMADD213PS Z12, T3, T2; \
	VFMADD213PS Z19, T3, T2; \
	VMULPS      T3, T2, T2; \
	VMULPS      T4, T2, T2; \
	VSUBPS      T2, Z22, T2; \
	VORPS       T1, T2, T2; \
	VADDPS      Z22, T2, T2; \
	VMULPS      Z18, V, V; \
	VMULPS      T2, V, V

// func addAVX512(dst *float32, src *float32, n int, gelu bool)
//
// dst[0:n] += src[0:n], n ≥ 1, then, if gelu, dst[0:n] = gelu(dst[0:n]):
// a residual add, or a dense layer's bias and GELU in one pass.
TEXT ·addAVX512(SB), NOSPLIT, $0-25
	MOVQ         dst+0(FP), SI
	MOVQ         src+8(FP), DI
	MOVQ         n+16(FP), BX
	MOVBLZX      gelu+24(FP), R9
	LOADEXP
	VBROADCASTSS vconst<>+36(SB), Z10
	VBROADCASTSS vconst<>+40(SB), Z11
	VBROADCASTSS vconst<>+48(SB), Z12
	VBROADCASTSS vconst<>+52(SB), Z13
	VBROADCASTSS vconst<>+56(SB), Z14
	VBROADCASTSS vconst<>+60(SB), Z15
	VBROADCASTSS vconst<>+64(SB), Z16
	VBROADCASTSS vconst<>+68(SB), Z17
	VBROADCASTSS vconst<>+72(SB), Z18
	VBROADCASTSS vconst<>+44(SB), Z19
	TAILMASK(BX)
	SHRQ         $4, BX
	TESTQ        BX, BX
	JZ           tail

loop:
	VMOVUPS (SI), Z0
	VADDPS  (DI), Z0, Z0
	TESTL   R9, R9
	JZ      store
	GELU(Z0, Z1, Z2, Z3, Z4)

store:
	VMOVUPS Z0, (SI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    BX
	JNZ     loop

tail:
	KORTESTW K1, K1
	JZ       done
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z (DI), K1, Z5
	VADDPS  Z5, Z0, Z0
	TESTL   R9, R9
	JZ      tailstore
	GELU(Z0, Z1, Z2, Z3, Z4)

tailstore:
	VMOVUPS Z0, K1, (SI)

done:
	VZEROUPPER
	RET

// func residualNormAVX512(x, y, b, gamma, beta *float32, h int, eps, invH float32)
//
// One row: x[0:h] = LayerNorm(x + y + b) with gamma and beta, h a positive
// multiple of 16 and invH = 1/h: the sum and its mean, then the variance
// about the mean (two passes, as layerNorm.apply), then the affine map.
TEXT ·residualNormAVX512(SB), NOSPLIT, $0-56
	MOVQ         x+0(FP), DI
	MOVQ         y+8(FP), SI
	MOVQ         b+16(FP), R8
	MOVQ         gamma+24(FP), R9
	MOVQ         beta+32(FP), R10
	MOVQ         h+40(FP), CX
	VMOVSS       eps+48(FP), X31
	VMOVSS       invH+52(FP), X30
	VMOVSS       vconst<>+8(SB), X29 // 1
	MOVQ         CX, DX
	SHLQ         $2, DX

	VXORPS Z0, Z0, Z0
	XORQ   AX, AX

sum:
	VMOVUPS (DI)(AX*1), Z2
	VADDPS  (SI)(AX*1), Z2, Z2
	VADDPS  (R8)(AX*1), Z2, Z2
	VMOVUPS Z2, (DI)(AX*1)
	VADDPS  Z2, Z0, Z0
	ADDQ    $64, AX
	CMPQ    AX, DX
	JLT     sum
	HREDUCE0(VADDPS)
	VMULSS       X30, X0, X0
	VBROADCASTSS X0, Z28        // mean

	VXORPS Z0, Z0, Z0
	XORQ   AX, AX

variance:
	VMOVUPS     (DI)(AX*1), Z2
	VSUBPS      Z28, Z2, Z2
	VFMADD231PS Z2, Z2, Z0
	ADDQ        $64, AX
	CMPQ        AX, DX
	JLT         variance
	HREDUCE0(VADDPS)
	VMULSS       X30, X0, X0
	VADDSS       X31, X0, X0
	VSQRTSS      X0, X0, X0
	VDIVSS       X0, X29, X0
	VBROADCASTSS X0, Z27        // 1/sqrt(variance + eps)

	XORQ AX, AX

affine:
	VMOVUPS (DI)(AX*1), Z2
	VSUBPS  Z28, Z2, Z2
	VMULPS  Z27, Z2, Z2
	VMULPS  (R9)(AX*1), Z2, Z2
	VADDPS  (R10)(AX*1), Z2, Z2
	VMOVUPS Z2, (DI)(AX*1)
	ADDQ    $64, AX
	CMPQ    AX, DX
	JLT     affine

	VZEROUPPER
	RET

// func toBF16AVX512(dst *uint16, x *float32, n int)
//
// dst[0:n] = x[0:n] rounded to bfloat16, ties to even, as toBF16 (TOBF16).
TEXT ·toBF16AVX512(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), BX
	MOVL         $0x7fff, AX
	VPBROADCASTD AX, Z18
	MOVL         $1, AX
	VPBROADCASTD AX, Z19
	TAILMASK(BX)
	SHRQ         $4, BX
	TESTQ        BX, BX
	JZ           tail

loop:
	VMOVUPS (SI), Z0
	TOBF16(Z0, Z1, Y0) // VPMOVDW to a register: Zen 4 runs it to memory slowly
	VMOVDQU Y0, (DI)
	ADDQ    $64, SI
	ADDQ    $32, DI
	DECQ    BX
	JNZ     loop

tail:
	KORTESTW  K1, K1
	JZ        done
	VMOVUPS.Z (SI), K1, Z0
	TOBF16(Z0, Z1, Y0)
	VMOVDQU16 Y0, K1, (DI)

done:
	VZEROUPPER
	RET

// func scaleRowsAVX512(dst *float32, ldd int, src *float32, lds int, mul *float32, rows, width int)
//
// dst[r·ldd + j] = src[r·lds + j]·mul[r] for r < rows (≥ 1), j < width
// (≥ 1); dst and src may be the same.
TEXT ·scaleRowsAVX512(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R10
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), R11
	MOVQ mul+32(FP), DX
	MOVQ rows+40(FP), R8
	MOVQ width+48(FP), BX
	SHLQ $2, R10
	SHLQ $2, R11
	TAILMASK(BX)
	SHRQ $4, BX                 // full blocks a row

row:
	VBROADCASTSS (DX), Z1
	XORQ         R9, R9
	MOVQ         BX, R12
	TESTQ        R12, R12
	JZ           rowtail

block:
	VMULPS  (SI)(R9*1), Z1, Z0
	VMOVUPS Z0, (DI)(R9*1)
	ADDQ    $64, R9
	DECQ    R12
	JNZ     block

rowtail:
	KORTESTW  K1, K1
	JZ        next
	VMOVUPS.Z (SI)(R9*1), K1, Z0
	VMULPS    Z1, Z0, Z0
	VMOVUPS   Z0, K1, (DI)(R9*1)

next:
	ADDQ R10, DI
	ADDQ R11, SI
	ADDQ $4, DX
	DECQ R8
	JNZ  row
	VZEROUPPER
	RET

// func absMaxAVX512(x *float32, n int) float32
//
// The largest |x[i]| for i < n, n a positive multiple of 16, or NaN if any
// x[i] is not finite (VMAXPS may drop a NaN, so Z1 sums x[i]·0, which is
// NaN for an infinity or a NaN and 0 otherwise).
TEXT ·absMaxAVX512(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS vconst<>+64(SB), Z31 // |x| mask
	VPXORD       Z0, Z0, Z0
	VPXORD       Z1, Z1, Z1
	VPXORD       Z30, Z30, Z30

amloop:
	VMOVUPS     (SI), Z2
	VANDPS      Z31, Z2, Z3
	VMAXPS      Z3, Z0, Z0
	VFMADD231PS Z30, Z2, Z1
	ADDQ        $64, SI
	SUBQ        $16, CX
	JNZ         amloop

	VEXTRACTF64X4 $1, Z0, Y2
	VMAXPS        Y2, Y0, Y0
	VEXTRACTF128  $1, Y0, X2
	VMAXPS        X2, X0, X0
	VPSHUFD       $0x4E, X0, X2
	VMAXPS        X2, X0, X0
	VPSHUFD       $0xB1, X0, X2
	VMAXPS        X2, X0, X0
	VCMPPS        $3, Z1, Z1, K1 // unordered: a lane is NaN
	KORTESTW      K1, K1
	JZ            amdone
	MOVL          $0x7fc00000, AX // NaN
	VMOVD         AX, X0

amdone:
	VZEROUPPER
	MOVSS X0, ret+16(FP)
	RET

// func quantizeAVX512(dst *int8, x *float32, n int, inv float32)
//
// dst[i] = x[i]·inv rounded to the nearest integer, halves away from zero
// (math.Round), for i < n, n a positive multiple of 16: the product is
// rounded to float32 first, as Go rounds x*inv, and every |x[i]·inv| is at
// most 127.5 (Quantize's inv). A product's integer part t is exact
// (truncation), its fraction x·inv − t too; a fraction of at least a half
// moves t one away from zero.
TEXT ·quantizeAVX512(SB), NOSPLIT, $0-28
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS inv+24(FP), Z31
	VBROADCASTSS vconst<>+64(SB), Z30 // |x| mask
	VBROADCASTSS vconst<>+68(SB), Z29 // sign mask
	VBROADCASTSS vconst<>+72(SB), Z28 // 0.5
	VBROADCASTSS vconst<>+8(SB), Z27  // 1

qloop:
	VMULPS      (SI), Z31, Z0
	VRNDSCALEPS $11, Z0, Z1  // truncated
	VSUBPS      Z1, Z0, Z2   // the fraction, exact
	VANDPS      Z30, Z2, Z2
	VCMPPS      $13, Z28, Z2, K1 // |fraction| ≥ 0.5
	VANDPS      Z29, Z0, Z3
	VORPS       Z27, Z3, Z3  // ±1, the product's sign
	VADDPS      Z3, Z1, K1, Z1
	VCVTTPS2DQ  Z1, Z1
	VPMOVSDB    Z1, (DI)
	ADDQ        $64, SI
	ADDQ        $16, DI
	SUBQ        $16, CX
	JNZ         qloop
	VZEROUPPER
	RET
