// Macros the matrix micro-kernels share (gemm*_amd64.s).

// ROWS6 points R10..R14 at the five rows of A after the one at SI, DX
// bytes apart, and clears BX, the offset along them.
#define ROWS6 \
	LEAQ (SI)(DX*1), R10; \
	LEAQ (R10)(DX*1), R11; \
	LEAQ (R11)(DX*1), R12; \
	LEAQ (R12)(DX*1), R13; \
	LEAQ (R13)(DX*1), R14; \
	XORQ BX, BX

// ROWS12 points R10, R11 and R12 at rows 3, 6 and 9 of A, DX bytes apart,
// so that rows 3i, 3i+1 and 3i+2 are at base i, +DX and +2·DX (SI, R10,
// R11, R12).
#define ROWS12 \
	LEAQ (SI)(DX*2), R10; \
	ADDQ DX, R10; \
	LEAQ (R10)(DX*2), R11; \
	ADDQ DX, R11; \
	LEAQ (R11)(DX*2), R12; \
	ADDQ DX, R12

// ZEROACC clears Z8..Z31, the accumulators of the AVX-512 kernels.
#define ZEROACC \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11; \
	VPXORD Z12, Z12, Z12; \
	VPXORD Z13, Z13, Z13; \
	VPXORD Z14, Z14, Z14; \
	VPXORD Z15, Z15, Z15; \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	VPXORD Z22, Z22, Z22; \
	VPXORD Z23, Z23, Z23; \
	VPXORD Z24, Z24, Z24; \
	VPXORD Z25, Z25, Z25; \
	VPXORD Z26, Z26, Z26; \
	VPXORD Z27, Z27, Z27; \
	VPXORD Z28, Z28, Z28; \
	VPXORD Z29, Z29, Z29; \
	VPXORD Z30, Z30, Z30; \
	VPXORD Z31, Z31, Z31

// TILEARGS loads a micro-kernel's arguments (K int, a *E, lda int, b *E,
// c *float32, ldc int): K into CX, a into SI, lda in bytes (elements of
// 1<<ESHIFT bytes) into DX, b into DI, c into R8 and ldc in bytes into R9.
#define TILEARGS(K, ESHIFT) \
	MOVQ K+0(FP), CX; \
	MOVQ a+8(FP), SI; \
	MOVQ lda+16(FP), DX; \
	SHLQ $ESHIFT, DX; \
	MOVQ b+24(FP), DI; \
	MOVQ c+32(FP), R8; \
	MOVQ ldc+40(FP), R9; \
	SHLQ $2, R9
