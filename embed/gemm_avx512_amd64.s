#include "textflag.h"
#include "tile_amd64.h"

// ZROW multiplies the 32 columns of B's row (Z0, Z1) by one element of A's
// row at ADDR, broadcast into T, and adds them to that row's accumulators
// ACC0, ACC1.
#define ZROW(ADDR, T, ACC0, ACC1) \
	VBROADCASTSS ADDR, T; \
	VFMADD231PS  Z0, T, ACC0; \
	VFMADD231PS  Z1, T, ACC1

// ZSTORE stores one row's accumulators at R8 and moves R8 to C's next row.
#define ZSTORE(ACC0, ACC1) \
	VMOVUPS ACC0, (R8); \
	VMOVUPS ACC1, 64(R8); \
	ADDQ    R9, R8

// func sgemm12x32AVX512(k int, a *float32, lda int, b *float32, c *float32, ldc int)
//
// C[0:12][0:32] = A[0:12][0:k] · B[0:k][0:32], overwriting C, for B two
// consecutive packed panels (each k rows of 16 floats, contiguous). A rows
// are lda floats apart; C rows ldc floats apart. k >= 1. Z8..Z31
// accumulate the tile (row r in Z(8+2r), Z(9+2r)); Z0, Z1 hold a row of
// the two panels; Z2..Z7 broadcast elements of A.
TEXT ·sgemm12x32AVX512(SB), NOSPLIT, $0-48
	TILEARGS(k, 2)

	ROWS12

	// AX is the second panel, k·16 floats on.
	MOVQ CX, AX
	SHLQ $6, AX
	ADDQ DI, AX

	ZEROACC

loop:
	VMOVUPS (DI), Z0
	VMOVUPS (AX), Z1
	ZROW((SI), Z2, Z8, Z9)
	ZROW((SI)(DX*1), Z3, Z10, Z11)
	ZROW((SI)(DX*2), Z4, Z12, Z13)
	ZROW((R10), Z5, Z14, Z15)
	ZROW((R10)(DX*1), Z6, Z16, Z17)
	ZROW((R10)(DX*2), Z7, Z18, Z19)
	ZROW((R11), Z2, Z20, Z21)
	ZROW((R11)(DX*1), Z3, Z22, Z23)
	ZROW((R11)(DX*2), Z4, Z24, Z25)
	ZROW((R12), Z5, Z26, Z27)
	ZROW((R12)(DX*1), Z6, Z28, Z29)
	ZROW((R12)(DX*2), Z7, Z30, Z31)
	ADDQ $4, SI
	ADDQ $4, R10
	ADDQ $4, R11
	ADDQ $4, R12
	ADDQ $64, DI
	ADDQ $64, AX
	DECQ CX
	JNZ  loop

	ZSTORE(Z8, Z9)
	ZSTORE(Z10, Z11)
	ZSTORE(Z12, Z13)
	ZSTORE(Z14, Z15)
	ZSTORE(Z16, Z17)
	ZSTORE(Z18, Z19)
	ZSTORE(Z20, Z21)
	ZSTORE(Z22, Z23)
	ZSTORE(Z24, Z25)
	ZSTORE(Z26, Z27)
	ZSTORE(Z28, Z29)
	ZSTORE(Z30, Z31)
	VZEROUPPER
	RET
