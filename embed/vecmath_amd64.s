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

// SHIFTEXP replaces x (in X) by e^(scale·(x − max)), scale in Z29 and max
// in Z30: a block of a row's softmax, as expShiftedAVX512 and
// attendSmallAVX512 both compute it. T1, T2 are clobbered.
#define SHIFTEXP(X, T1, T2) \
	VSUBPS Z30, X, X; \
	VMULPS Z29, X, X; \
	EXP(X, T1, T2)

// TAILEXP replaces a row's last n mod 16 values at ADDR (mask K1) by
// their exponentials (SHIFTEXP) and adds them to the row's sums in Z6.
#define TAILEXP(ADDR) \
	VMOVUPS.Z ADDR, K1, Z0; \
	SHIFTEXP(Z0, Z1, Z2); \
	VMOVUPS   Z0, K1, ADDR; \
	VADDPS    Z0, Z6, K1, Z6

// ROWMAX ends a row's maximum: the lanes of its last n mod 16 values at
// ADDR (mask K1) folded into Z0's, Z0 reduced, and broadcast into Z30.
// Z1 is clobbered.
#define ROWMAX(ADDR) \
	VBROADCASTSS vconst<>+76(SB), Z1; \
	VMOVUPS      ADDR, K1, Z1; \
	VMAXPS       Z1, Z0, Z0; \
	HREDUCE0(VMAXPS); \
	VBROADCASTSS X0, Z30

// ROWSUM sums a row's exponentials, kept by block in Z31 and Z6, into X0's
// lowest lane.
#define ROWSUM \
	VADDPS Z6, Z31, Z0; \
	HREDUCE0(VADDPS)

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
	ROWMAX((R9))                // lanes past n stay -Inf

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
	SHIFTEXP(Z0, Z1, Z2)
	SHIFTEXP(Z3, Z4, Z5)
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
	SHIFTEXP(Z0, Z1, Z2)
	VMOVUPS Z0, (SI)
	VADDPS  Z0, Z31, Z31
	ADDQ    $64, SI

exptail:
	KORTESTW  K1, K1
	JZ        sum
	TAILEXP((SI))
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
	ROWSUM
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

// SCORE4 adds one dimension's products to a row's scores over four panels
// of keys (Z0..Z3): the query's value at (REG)(AX*1) broadcast into T.
#define SCORE4(REG, T, A0, A1, A2, A3) \
	VBROADCASTSS (REG)(AX*1), T; \
	VFMADD231PS  Z0, T, A0; \
	VFMADD231PS  Z1, T, A1; \
	VFMADD231PS  Z2, T, A2; \
	VFMADD231PS  Z3, T, A3

#define SCORE3(REG, T, A0, A1, A2) \
	VBROADCASTSS (REG)(AX*1), T; \
	VFMADD231PS  Z0, T, A0; \
	VFMADD231PS  Z1, T, A1; \
	VFMADD231PS  Z2, T, A2

#define SCORE2(REG, T, A0, A1) \
	VBROADCASTSS (REG)(AX*1), T; \
	VFMADD231PS  Z0, T, A0; \
	VFMADD231PS  Z1, T, A1

#define SCORE1(REG, T, A0) \
	VBROADCASTSS (REG)(AX*1), T; \
	VFMADD231PS  Z0, T, A0

// WEIGH adds token j's values (Z0, Z1) times a row's probability of it,
// at OFF(R9)(AX*1) broadcast into T, to that row's context A0, A1.
#define WEIGH(OFF, T, A0, A1) \
	VBROADCASTSS OFF(R9)(AX*1), T; \
	VFMADD231PS  Z0, T, A0; \
	VFMADD231PS  Z1, T, A1

// CONTEXT scales a row's context A0, A1 by 1 over its sum, at OFF(R9),
// and stores it at (REG).
#define CONTEXT(OFF, REG, A0, A1) \
	VBROADCASTSS OFF(R9), Z2; \
	VMULPS       Z2, A0, A0; \
	VMULPS       Z2, A1, A1; \
	VMOVUPS      A0, (REG); \
	VMOVUPS      A1, 64(REG)

// func attendSmallAVX512(q *float32, ld int, kp *float32, v *float32, seq int, scale float32, nr int, p *float32, ctx *float32, ldc int)
//
// One head's attention (heads of 32) for nr ≤ 4 query rows of a sequence
// of seq ≤ 64 tokens, in one pass: scores q·kᵀ for the rows at q (ld
// floats apart) against the keys packed as packNT packs them at kp (⌈seq/16⌉
// panels of 32×16), e^(scale·(score − max)) and their sums as
// expShiftedAVX512 computes them, then the context Σ_j e_j·v_j (token j's
// values at v + j·ld) times 1 over the sum into the rows at ctx (ldc
// floats apart): every product summed from zero by FMA in the order the
// float32 kernels sum it, so the bits are attend's on any FMA kernel set.
// p is scratch of 4·64 + 4 floats (the rows' exponentials, then 1 over
// their sums). Rows past nr repeat the last one (the same bits, written
// to the same place).
TEXT ·attendSmallAVX512(SB), NOSPLIT, $0-80
	MOVQ q+0(FP), SI
	MOVQ ld+8(FP), DX
	SHLQ $2, DX
	MOVQ kp+16(FP), DI
	MOVQ seq+32(FP), BX
	MOVQ nr+48(FP), AX
	MOVQ p+56(FP), R9

	// The rows' pointers: SI, R10, R11, R12, the last repeated.
	MOVQ SI, R10
	CMPQ AX, $1
	JLE  row1
	ADDQ DX, R10

row1:
	MOVQ R10, R11
	CMPQ AX, $2
	JLE  row2
	ADDQ DX, R11

row2:
	MOVQ R11, R12
	CMPQ AX, $3
	JLE  row3
	ADDQ DX, R12

row3:
	// Scores: row r's panel b in Z(16+4r+b), one dimension a step (AX
	// its byte offset in each row), summed from zero.
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31
	XORQ   AX, AX
	MOVQ   BX, CX
	ADDQ   $15, CX
	SHRQ   $4, CX             // panels
	CMPQ   CX, $2
	JLT    scores1
	JEQ    scores2
	CMPQ   CX, $3
	JEQ    scores3

scores4:
	VMOVUPS (DI), Z0
	VMOVUPS 2048(DI), Z1
	VMOVUPS 4096(DI), Z2
	VMOVUPS 6144(DI), Z3
	SCORE4(SI, Z4, Z16, Z17, Z18, Z19)
	SCORE4(R10, Z5, Z20, Z21, Z22, Z23)
	SCORE4(R11, Z6, Z24, Z25, Z26, Z27)
	SCORE4(R12, Z7, Z28, Z29, Z30, Z31)
	ADDQ    $64, DI
	ADDQ    $4, AX
	CMPQ    AX, $128
	JLT     scores4
	JMP     stored

scores3:
	VMOVUPS (DI), Z0
	VMOVUPS 2048(DI), Z1
	VMOVUPS 4096(DI), Z2
	SCORE3(SI, Z4, Z16, Z17, Z18)
	SCORE3(R10, Z5, Z20, Z21, Z22)
	SCORE3(R11, Z6, Z24, Z25, Z26)
	SCORE3(R12, Z7, Z28, Z29, Z30)
	ADDQ    $64, DI
	ADDQ    $4, AX
	CMPQ    AX, $128
	JLT     scores3
	JMP     stored

scores2:
	VMOVUPS (DI), Z0
	VMOVUPS 2048(DI), Z1
	SCORE2(SI, Z4, Z16, Z17)
	SCORE2(R10, Z5, Z20, Z21)
	SCORE2(R11, Z6, Z24, Z25)
	SCORE2(R12, Z7, Z28, Z29)
	ADDQ    $64, DI
	ADDQ    $4, AX
	CMPQ    AX, $128
	JLT     scores2
	JMP     stored

scores1:
	VMOVUPS (DI), Z0
	SCORE1(SI, Z4, Z16)
	SCORE1(R10, Z5, Z20)
	SCORE1(R11, Z6, Z24)
	SCORE1(R12, Z7, Z28)
	ADDQ    $64, DI
	ADDQ    $4, AX
	CMPQ    AX, $128
	JLT     scores1

stored:
	VMOVUPS Z16, (R9)
	VMOVUPS Z17, 64(R9)
	VMOVUPS Z18, 128(R9)
	VMOVUPS Z19, 192(R9)
	VMOVUPS Z20, 256(R9)
	VMOVUPS Z21, 320(R9)
	VMOVUPS Z22, 384(R9)
	VMOVUPS Z23, 448(R9)
	VMOVUPS Z24, 512(R9)
	VMOVUPS Z25, 576(R9)
	VMOVUPS Z26, 640(R9)
	VMOVUPS Z27, 704(R9)
	VMOVUPS Z28, 768(R9)
	VMOVUPS Z29, 832(R9)
	VMOVUPS Z30, 896(R9)
	VMOVUPS Z31, 960(R9)

	// Each row's exponentials, as expShiftedAVX512 computes them: the
	// maximum, then e^(scale·(x − max)) by blocks of 16, even blocks summed
	// in Z31 and odd ones and the last n mod 16 in Z6; 1 over the sum to
	// 1024(R9) on.
	LOADEXP
	VBROADCASTSS scale+40(FP), Z29
	TAILMASK(BX)
	MOVQ         BX, DX
	SHRQ         $4, DX       // whole blocks
	MOVQ         R9, SI       // the row
	XORQ         R8, R8       // the row's number, times 4

softmax:
	VBROADCASTSS vconst<>+76(SB), Z0
	MOVQ         SI, DI
	MOVQ         DX, CX
	TESTQ        CX, CX
	JZ           smaxtail

smax:
	VMAXPS (DI), Z0, Z0
	ADDQ   $64, DI
	DECQ   CX
	JNZ    smax

smaxtail:
	ROWMAX((DI))

	VXORPS Z31, Z31, Z31
	VXORPS Z6, Z6, Z6
	MOVQ   SI, DI
	XORQ   CX, CX             // the block

sexp:
	CMPQ    CX, DX
	JEQ     sexptail
	VMOVUPS (DI), Z0
	SHIFTEXP(Z0, Z1, Z2)
	VMOVUPS Z0, (DI)
	ADDQ    $64, DI
	TESTQ   $1, CX
	JNZ     sodd
	VADDPS  Z0, Z31, Z31
	INCQ    CX
	JMP     sexp

sodd:
	VADDPS Z0, Z6, Z6
	INCQ   CX
	JMP    sexp

sexptail:
	KORTESTW  K1, K1
	JZ        ssum
	TAILEXP((DI))

ssum:
	ROWSUM
	VMOVSS vconst<>+8(SB), X1
	VDIVSS X0, X1, X1
	VMOVSS X1, 1024(R9)(R8*1)
	ADDQ   $256, SI
	ADDQ   $4, R8
	CMPQ   R8, $16
	JLT    softmax

	// The context: row r's in Z(8+2r), Z(9+2r), one token a step (AX its
	// byte offset in the rows' exponentials), summed from zero.
	MOVQ   v+24(FP), DI
	MOVQ   ld+8(FP), DX
	SHLQ   $2, DX
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	XORQ   AX, AX
	SHLQ   $2, BX

weigh:
	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z1
	WEIGH(0, Z2, Z8, Z9)
	WEIGH(256, Z3, Z10, Z11)
	WEIGH(512, Z4, Z12, Z13)
	WEIGH(768, Z5, Z14, Z15)
	ADDQ    DX, DI
	ADDQ    $4, AX
	CMPQ    AX, BX
	JLT     weigh

	// The rows' pointers into ctx, the last repeated.
	MOVQ ctx+64(FP), SI
	MOVQ ldc+72(FP), DX
	SHLQ $2, DX
	MOVQ nr+48(FP), AX
	MOVQ SI, R10
	CMPQ AX, $1
	JLE  out1
	ADDQ DX, R10

out1:
	MOVQ R10, R11
	CMPQ AX, $2
	JLE  out2
	ADDQ DX, R11

out2:
	MOVQ R11, R12
	CMPQ AX, $3
	JLE  out3
	ADDQ DX, R12

out3:
	// A row past nr writes the last row's values, the same bits, again.
	CONTEXT(1036, R12, Z14, Z15)
	CONTEXT(1032, R11, Z12, Z13)
	CONTEXT(1028, R10, Z10, Z11)
	CONTEXT(1024, SI, Z8, Z9)
	VZEROUPPER
	RET
