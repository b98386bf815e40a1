package main

// bf16Kernel writes the bfloat16 kernel. It goes panel by panel (32
// columns, two tiles of 16) and, within a panel, two blocks of rows at a
// time: A's two blocks in TMM4 and TMM5, the panel's halves in TMM6 and
// TMM7, their four products summed in TMM0..TMM3, so each tile loaded
// feeds two products (a block left alone at the end uses TMM0 and TMM1).
// The sums are float32 already and are stored straight into C. While it
// computes a panel's first two blocks (or its only one) it prefetches the
// next panel into L2, each step the same k pairs of it, so that panel's
// weights are on their way from memory while this one's are used.
func bf16Kernel(w *writer) {
	bf16KernelNamed(w, "gemmBF16AMX", "b", bf16Prefetch, bf16PrefetchSingle)
}

// The cache lines of the next panel prefetched a step (of the 32 a step
// of it spans): under two blocks, and under a block alone, whose step is
// half as long. Measured on an Intel Xeon with AMX (weights out of cache
// and in it, 12 to 230 rows), against 0, 16 and 32 under two blocks and
// against prefetching into L1: 8 and 32 into L2 were as fast or faster
// everywhere.
const (
	bf16Prefetch       = 8
	bf16PrefetchSingle = 32
)

func bf16KernelNamed(w *writer, name, label string, pfLines, pfSingle int) {
	p := w.p
	const pairs = 16 // k pairs per step: 64 bytes of each A row
	p("// func %s(kp int, a *uint16, lda int, b *uint16, c *float32, ldc int, blocks int, panels int, lastA *uint16, lastC *float32)", name)
	p("//")
	p("// C[0:16·blocks][0:32·panels] = A · B over kp k pairs (a multiple of %d),", pairs)
	p("// in float32 from bfloat16 operands, overwriting C: A rows converted by")
	p("// rowsToBF16, lda uint16s apart; B bf16 panels (gemm_bf16.go's layout,")
	p("// 64·kp uint16s each, consecutive), each panel")
	p("// row of 32 columns loaded as two tiles of 16 (128 bytes apart); C rows")
	p("// ldc floats apart. TDPBF16PS sums each pair's products in float32, as")
	p("// VDPBF16PS does up to rounding; a sum does not depend on the blocking.")
	p("// The last block's rows of A are read from lastA instead, and its rows")
	p("// of C go to lastC (lda and ldc apart too), each unless it is nil: a")
	p("// block padded past A's rows, whose C rows are not C's.")
	p("TEXT ·%s(SB), NOSPLIT, $24-80", name)
	p("\tLEAQ amxcfg<>(SB), AX")
	w.amx(ldtilecfg(mem{rAX, -1, 0}))
	p("\tMOVQ lda+16(FP), DX")
	p("\tSHLQ $1, DX")
	p("\tMOVQ kp+0(FP), R8")
	p("\tSHLQ $7, R8 // a panel's bytes: 32 columns of 2 values of 2 bytes per k pair")
	p("\tMOVQ ldc+40(FP), R10")
	p("\tSHLQ $2, R10")
	p("\tMOVQ $128, R14")
	p("\tMOVQ b+24(FP), DI")
	p("\tMOVQ c+32(FP), R9")
	p("\tMOVQ R9, cpanel-16(SP)")
	p("\tMOVQ lastC+72(FP), R12")
	p("\tMOVQ R12, clast-24(SP)")
	p("\tMOVQ panels+56(FP), R11")
	p("\tMOVQ R11, left-8(SP)")
	p("")
	p("%spanel:", label)
	p("\tMOVQ a+8(FP), SI")
	p("\tMOVQ cpanel-16(SP), R9")
	p("\tMOVQ blocks+48(FP), R11")
	p("")
	p("%spair:", label)
	p("\tCMPQ R11, $2")
	p("\tJLT  %ssingle", label)
	for i := range 4 {
		w.amx(tilezero(i))
	}
	p("\tMOVQ SI, AX")
	p("\tMOVQ DX, R13")
	p("\tSHLQ $4, R13")
	p("\tADDQ SI, R13 // the second block's rows")
	p("\tCMPQ R11, $2")
	p("\tJNE  %sfrom2", label)
	p("\tCMPQ lastA+64(FP), $0")
	p("\tJEQ  %sfrom2", label)
	p("\tMOVQ lastA+64(FP), R13 // the second is the last block, its rows from lastA")
	p("")
	p("%sfrom2:", label)
	p("\tMOVQ DI, BX")
	p("\tMOVQ kp+0(FP), CX")
	p("\tSHRQ $4, CX")
	p("")
	// steps writes a loop over the k steps of one block's rows or two
	// (A in TMM4 and TMM5, from AX and R13) times the panel's halves
	// (TMM6 and TMM7, from BX), prefetching lines of the next panel a step.
	steps := func(loop string, blocks, lines int) {
		p("%s:", loop)
		for i := range lines {
			p("\tPREFETCHT1 %d(BX)(R8*1)", 64*i)
		}
		w.amx(tileloadd(4, mem{rAX, rDX, 0}))
		if blocks == 2 {
			w.amx(tileloadd(5, mem{r13, rDX, 0}))
		}
		for half := range 2 {
			w.amx(tileloadd(6+half, mem{rBX, r14, 64 * half}))
			w.amx(tdpbf16ps(half, 4, 6+half))
			if blocks == 2 {
				w.amx(tdpbf16ps(2+half, 5, 6+half))
			}
		}
		p("\tADDQ $%d, AX", 4*pairs)
		if blocks == 2 {
			p("\tADDQ $%d, R13", 4*pairs)
		}
		p("\tADDQ $%d, BX", 128*pairs)
		p("\tDECQ CX")
		p("\tJNZ  %s", loop)
	}
	// loops writes the step loop twice: first prefetching the next panel,
	// taken where the comparison cmp finds equal, then without.
	loops := func(cmp, comment, name string, blocks, lines int) {
		p("\t%s", cmp)
		p("\tJNE  %s%s", label, name)
		p("\t// %s", comment)
		steps(label+name+"pf", blocks, lines)
		p("\tJMP  %s%sdone", label, name)
		p("")
		steps(label+name, blocks, 0)
		p("")
		p("%s%sdone:", label, name)
	}
	loops("CMPQ SI, a+8(FP)", "The panel's first two blocks: the next panel is prefetched meanwhile.", "step2", 2, pfLines)
	w.amx(tilestored(mem{r9, r10, 0}, 0))
	w.amx(tilestored(mem{r9, r10, 64}, 1))
	p("\tMOVQ R10, R12")
	p("\tSHLQ $4, R12")
	p("\tADDQ R9, R12 // the second block's rows of C")
	p("\tCMPQ R11, $2")
	p("\tJNE  %sstore2", label)
	p("\tCMPQ lastC+72(FP), $0")
	p("\tJEQ  %sstore2", label)
	p("\tMOVQ clast-24(SP), R12 // the second is the last block, its rows to lastC")
	p("")
	p("%sstore2:", label)
	w.amx(tilestored(mem{r12, r10, 0}, 2))
	w.amx(tilestored(mem{r12, r10, 64}, 3))
	p("")
	p("\t// The next two blocks of rows.")
	p("\tMOVQ DX, R12")
	p("\tSHLQ $5, R12")
	p("\tADDQ R12, SI")
	p("\tMOVQ R10, R12")
	p("\tSHLQ $5, R12")
	p("\tADDQ R12, R9")
	p("\tSUBQ $2, R11")
	p("\tJMP  %spair", label)
	p("")
	p("%ssingle:", label)
	p("\tTESTQ R11, R11")
	p("\tJZ   %snext", label)
	w.amx(tilezero(0))
	w.amx(tilezero(1))
	p("\tMOVQ SI, AX")
	p("\tCMPQ lastA+64(FP), $0")
	p("\tJEQ  %sto1", label)
	p("\tMOVQ lastA+64(FP), AX // the block alone is the last, its rows from lastA")
	p("")
	p("%sto1:", label)
	p("\tCMPQ lastC+72(FP), $0")
	p("\tJEQ  %sfirst1", label)
	p("\tMOVQ clast-24(SP), R9 // and to lastC")
	p("")
	p("%sfirst1:", label)
	p("\tMOVQ DI, BX")
	p("\tMOVQ kp+0(FP), CX")
	p("\tSHRQ $4, CX")
	p("")
	loops("CMPQ blocks+48(FP), $1", "The panel's only block: the next panel is prefetched meanwhile.", "step1", 1, pfSingle)
	w.amx(tilestored(mem{r9, r10, 0}, 0))
	w.amx(tilestored(mem{r9, r10, 64}, 1))
	p("")
	p("%snext:", label)
	p("\t// The next panel.")
	p("\tADDQ R8, DI")
	p("\tADDQ $128, cpanel-16(SP)")
	p("\tADDQ $128, clast-24(SP)")
	p("\tDECQ left-8(SP)")
	p("\tJNZ  %spanel", label)
	p("")
	w.amx(tilerelease())
	p("\tRET")
}
