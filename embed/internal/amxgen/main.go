// Command amxgen writes embed/gemm_amx_amd64.s, the AMX int8 and bfloat16
// matrix kernels. Go's assembler has no AMX mnemonics, so this program
// encodes LDTILECFG, TILERELEASE, TILEZERO, TILELOADD, TILESTORED, TDPBUSD
// and TDPBF16PS itself (VEX, in the forms the kernel uses) and writes each as BYTE
// directives beside the instruction in a comment; TestEncodings checks
// every one of them against GNU as, and the embed package's int8 kernel
// tests check the kernel against the definition on a CPU with AMX.
//
//	go generate ./embed
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
)

func main() {
	out := flag.String("out", "gemm_amx_amd64.s", "file to write the kernel to")
	flag.Parse()
	if err := os.WriteFile(*out, kernel().b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}

// The general registers by their x86 numbers, and Go's names for them.
const (
	rAX = iota
	rCX
	rDX
	rBX
	rSP
	rBP
	rSI
	rDI
	r8
	r9
	r10
	r11
	r12
	r13
	r14
	r15
)

var goNames = [...]string{"AX", "CX", "DX", "BX", "SP", "BP", "SI", "DI", "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15"}

var gnuNames = [...]string{"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}

// mem is the memory operand [base + index·1 + disp] (index -1 for none).
type mem struct{ base, index, disp int }

func (m mem) gnu() string {
	s := "[" + gnuNames[m.base]
	if m.index >= 0 {
		s += "+" + gnuNames[m.index] + "*1"
	}
	if m.disp != 0 {
		s += fmt.Sprintf("%+d", m.disp)
	}
	return s + "]"
}

func (m mem) goSyntax() string {
	s := ""
	if m.disp != 0 {
		s = fmt.Sprint(m.disp)
	}
	s += "(" + goNames[m.base] + ")"
	if m.index >= 0 {
		s += "(" + goNames[m.index] + "*1)"
	}
	return s
}

// Instruction is one encoded instruction: its bytes and its GNU as
// (Intel syntax) and Go-like spellings.
type instruction struct {
	bytes    []byte
	gnu, goS string
}

// vex encodes a three-byte VEX prefix for map 0F38, W0, 128 bits: reg,
// index and base are the high bits (bit 3) of ModRM.reg, SIB.index and
// ModRM.rm or SIB.base; vvvv the second source (0 when there is none);
// pp the implied prefix (0 none, 1 66, 2 F3, 3 F2).
func vex(reg, index, base, vvvv int, pp byte) []byte {
	inv := func(v int) byte { return byte(^(v >> 3) & 1) }
	b1 := inv(reg)<<7 | inv(index)<<6 | inv(base)<<5 | 0b00010 // map 0F38
	b2 := byte(^vvvv&0xf)<<3 | pp                              // W0, L0
	return []byte{0xc4, b1, b2}
}

// memOperand encodes ModRM (with reg) and what follows it for m: a SIB
// byte when m has an index or its base needs one, and the shortest
// displacement (RBP and R13 as a base always take one).
func memOperand(reg int, m mem) (modrm []byte, indexBit int) {
	var mod byte
	switch {
	case m.disp == 0 && m.base&7 != rBP:
		mod = 0
	case m.disp >= -128 && m.disp <= 127:
		mod = 1
	default:
		mod = 2
	}
	var out []byte
	if m.index < 0 && m.base&7 != rSP {
		out = append(out, mod<<6|byte(reg&7)<<3|byte(m.base&7))
	} else {
		index := m.index
		if index < 0 {
			index = rSP // no index
		}
		if index == rSP {
			indexBit = 0
		} else {
			indexBit = index
		}
		out = append(out, mod<<6|byte(reg&7)<<3|0b100, byte(index&7)<<3|byte(m.base&7))
	}
	switch mod {
	case 1:
		out = append(out, byte(int8(m.disp)))
	case 2:
		d := uint32(int32(m.disp))
		out = append(out, byte(d), byte(d>>8), byte(d>>16), byte(d>>24))
	}
	return out, indexBit
}

// memInstr encodes opcode op with tile (or /digit) reg and memory operand m.
func memInstr(op byte, pp byte, reg int, m mem) []byte {
	modrm, index := memOperand(reg, m)
	b := vex(reg, index, m.base, 0, pp)
	b = append(b, op)
	return append(b, modrm...)
}

func ldtilecfg(m mem) instruction {
	return instruction{memInstr(0x49, 0, 0, m), "ldtilecfg " + m.gnu(), "LDTILECFG " + m.goSyntax()}
}

func tilerelease() instruction {
	return instruction{[]byte{0xc4, 0xe2, 0x78, 0x49, 0xc0}, "tilerelease", "TILERELEASE"}
}

func tilezero(t int) instruction {
	b := append(vex(0, 0, 0, 0, 3), 0x49, 0b11<<6|byte(t)<<3)
	return instruction{b, fmt.Sprintf("tilezero tmm%d", t), fmt.Sprintf("TILEZERO TMM%d", t)}
}

func tileloadd(t int, m mem) instruction {
	return instruction{memInstr(0x4b, 3, t, m), fmt.Sprintf("tileloadd tmm%d, %s", t, m.gnu()), fmt.Sprintf("TILELOADD %s, TMM%d", m.goSyntax(), t)}
}

func tilestored(m mem, t int) instruction {
	return instruction{memInstr(0x4b, 2, t, m), fmt.Sprintf("tilestored %s, tmm%d", m.gnu(), t), fmt.Sprintf("TILESTORED TMM%d, %s", t, m.goSyntax())}
}

// tdpbusd is TDPBUSD dst, a, b: dst.int32[i][j] += Σ a.u8[i][4k+l]·b.s8[k][4j+l].
func tdpbusd(dst, a, b int) instruction {
	enc := append(vex(0, 0, 0, b, 1), 0x5e, 0b11<<6|byte(dst)<<3|byte(a))
	return instruction{enc, fmt.Sprintf("tdpbusd tmm%d, tmm%d, tmm%d", dst, a, b), fmt.Sprintf("TDPBUSD TMM%d, TMM%d, TMM%d", b, a, dst)}
}

// tdpbf16ps is TDPBF16PS dst, a, b: dst.fp32[i][j] += Σ a.bf16[i][2k+l]·b.bf16[k][2j+l].
func tdpbf16ps(dst, a, b int) instruction {
	enc := append(vex(0, 0, 0, b, 2), 0x5c, 0b11<<6|byte(dst)<<3|byte(a))
	return instruction{enc, fmt.Sprintf("tdpbf16ps tmm%d, tmm%d, tmm%d", dst, a, b), fmt.Sprintf("TDPBF16PS TMM%d, TMM%d, TMM%d", b, a, dst)}
}

// writer collects the kernel's text and every AMX instruction it encodes.
type writer struct {
	b    bytes.Buffer
	used []instruction
}

func (w *writer) p(format string, args ...any) { fmt.Fprintf(&w.b, format+"\n", args...) }

// amx writes ins as BYTE directives, its Go-like spelling beside them.
func (w *writer) amx(ins instruction) {
	w.used = append(w.used, ins)
	var bs []string
	for _, x := range ins.bytes {
		bs = append(bs, fmt.Sprintf("BYTE $0x%02x", x))
	}
	w.p("\t%s // %s", strings.Join(bs, "; "), ins.goS)
}

// Tiles: C accumulates in TMM0..TMM3 (16 rows of 16 int32, one panel
// each), A's 16 rows of 64 codes load into TMM4, the four panels' 16 k
// quads into TMM5, TMM6, TMM7 and TMM5 again.
const (
	tileA = 4
	rows  = 16 // A rows per block
	quads = 16 // k quads per step: 64 bytes of each A row
)

var tileB = [4]int{5, 6, 7, 5}

// kernel writes the kernel.
func kernel() *writer {
	w := &writer{}
	p := w.p
	p("// Code generated by embed/internal/amxgen; DO NOT EDIT.")
	p("")
	p("#include \"textflag.h\"")
	p("")
	p("// The tile configuration: palette 1, eight tiles of 16 rows of 64 bytes.")
	p("DATA amxcfg<>+0(SB)/8, $0x0000000000000001")
	p("DATA amxcfg<>+8(SB)/8, $0")
	p("DATA amxcfg<>+16(SB)/8, $0x0040004000400040 // colsb of tiles 0-3")
	p("DATA amxcfg<>+24(SB)/8, $0x0040004000400040 // colsb of tiles 4-7")
	p("DATA amxcfg<>+32(SB)/8, $0")
	p("DATA amxcfg<>+40(SB)/8, $0")
	p("DATA amxcfg<>+48(SB)/8, $0x1010101010101010 // rows of tiles 0-7")
	p("DATA amxcfg<>+56(SB)/8, $0")
	p("GLOBL amxcfg<>(SB), RODATA|NOPTR, $64")
	p("")
	p("// func gemmU8S8AMX(kq int, a *byte, lda int, b *byte, panelLen int, c *float32, ldc int, blocks int, groups int, work *int32)")
	p("//")
	p("// C[0:16·blocks][0:64·groups] = A · B over kq k quads (a multiple of %d),", quads)
	p("// scaled to float32 as the VNNI kernel scales them, overwriting C: A rows")
	p("// quantised by quantizeRows, lda bytes apart; B groups of four int8")
	p("// panels (gemm_int8.go's layout, panelLen bytes each, consecutive); C")
	p("// rows ldc floats apart; work 16·64 int32 of scratch. For each group of")
	p("// panels, for each block of 16 rows, TDPBUSD sums the unsigned-by-signed")
	p("// byte products in int32 without saturating (as VPDPBUSD does), the")
	p("// tiles are stored to work and the epilogue scales them row by row.")
	p("TEXT ·gemmU8S8AMX(SB), NOSPLIT, $16-80")
	p("\tLEAQ amxcfg<>(SB), AX")
	w.amx(ldtilecfg(mem{rAX, -1, 0}))
	p("\tMOVQ lda+16(FP), DX")
	p("\tMOVQ panelLen+32(FP), R8")
	p("\tMOVQ ldc+48(FP), R10")
	p("\tSHLQ $2, R10")
	p("\tMOVQ work+72(FP), R13")
	p("\tMOVQ $64, R14")
	p("\tMOVQ b+24(FP), DI")
	p("\tMOVQ c+40(FP), R9")
	p("\tMOVQ R9, cgroup-16(SP)")
	p("\tMOVQ groups+64(FP), R11")
	p("\tMOVQ R11, left-8(SP)")
	p("")
	p("group:")
	p("\t// The four panels' column sums into Z0..Z3, their scales into Z4..Z7.")
	p("\tMOVQ kq+0(FP), R12")
	p("\tSHLQ $6, R12")
	p("\tADDQ DI, R12")
	for i := range 4 {
		p("\tVMOVDQU32 (R12), Z%d", i)
		p("\tVMOVUPS 64(R12), Z%d", 4+i)
		if i < 3 {
			p("\tADDQ R8, R12")
		}
	}
	p("\tMOVQ a+8(FP), SI")
	p("\tMOVQ cgroup-16(SP), R9")
	p("\tMOVQ blocks+56(FP), R11")
	p("")
	p("block:")
	for i := range 4 {
		w.amx(tilezero(i))
	}
	p("\tMOVQ SI, AX")
	p("\tMOVQ DI, BX")
	p("\tMOVQ kq+0(FP), CX")
	p("\tSHRQ $4, CX")
	p("")
	p("step:")
	w.amx(tileloadd(tileA, mem{rAX, rDX, 0}))
	w.amx(tileloadd(tileB[0], mem{rBX, r14, 0}))
	w.amx(tdpbusd(0, tileA, tileB[0]))
	p("\tMOVQ BX, R12")
	for i := 1; i < 4; i++ {
		p("\tADDQ R8, R12")
		w.amx(tileloadd(tileB[i], mem{r12, r14, 0}))
		w.amx(tdpbusd(i, tileA, tileB[i]))
	}
	p("\tADDQ $%d, AX", 4*quads)
	p("\tADDQ $%d, BX", 64*quads)
	p("\tDECQ CX")
	p("\tJNZ  step")
	p("")
	p("\t// The int32 sums to work, 16 rows of 64 (256 bytes apart).")
	p("\tMOVQ $256, R12")
	for i := range 4 {
		w.amx(tilestored(mem{r13, r12, 64 * i}, i))
	}
	p("")
	p("\t// Row by row: float32(acc − zx·colsum)·(sw·sx), zx and sx after the")
	p("\t// row's codes (4·kq bytes), into C.")
	p("\tMOVQ kq+0(FP), CX")
	p("\tSHLQ $2, CX")
	p("\tMOVQ SI, AX")
	p("\tMOVQ R9, BX")
	for r := range rows {
		p("\tVPBROADCASTD (AX)(CX*1), Z8")
		p("\tVBROADCASTSS 4(AX)(CX*1), Z9")
		for i := range 4 {
			acc, tmp := 10+i, 14+i
			p("\tVMOVDQU32 %d(R13), Z%d", 256*r+64*i, acc)
			p("\tVPMULLD Z%d, Z8, Z%d", i, tmp)
			p("\tVPSUBD Z%d, Z%d, Z%d", tmp, acc, acc)
			p("\tVCVTDQ2PS Z%d, Z%d", acc, acc)
			p("\tVMULPS Z%d, Z9, Z%d", 4+i, tmp)
			p("\tVMULPS Z%d, Z%d, Z%d", tmp, acc, acc)
			p("\tVMOVUPS Z%d, %d(BX)", acc, 64*i)
		}
		if r < rows-1 {
			p("\tADDQ DX, AX")
			p("\tADDQ R10, BX")
		}
	}
	p("")
	p("\t// The next block of rows.")
	p("\tMOVQ DX, R12")
	p("\tSHLQ $4, R12")
	p("\tADDQ R12, SI")
	p("\tMOVQ R10, R12")
	p("\tSHLQ $4, R12")
	p("\tADDQ R12, R9")
	p("\tDECQ R11")
	p("\tJNZ  block")
	p("")
	p("\t// The next group of panels.")
	p("\tMOVQ R8, R12")
	p("\tSHLQ $2, R12")
	p("\tADDQ R12, DI")
	p("\tADDQ $256, cgroup-16(SP)")
	p("\tDECQ left-8(SP)")
	p("\tJNZ  group")
	p("")
	w.amx(tilerelease())
	p("\tVZEROUPPER")
	p("\tRET")
	p("")
	bf16Kernel(w)
	return w
}

// bf16Kernel writes the bfloat16 kernel: C tiles TMM0..TMM3 (two panels
// of 32 columns, each as two tiles of 16), A's 16 rows of 32 values in
// TMM4, B's halves of panels in TMM5, TMM6, TMM7 and TMM5 again; the
// sums are float32 already and are stored straight into C.
func bf16Kernel(w *writer) {
	p := w.p
	const pairs = 16 // k pairs per step: 64 bytes of each A row
	p("// func gemmBF16AMX(kp int, a *uint16, lda int, b *uint16, c *float32, ldc int, blocks int, groups int)")
	p("//")
	p("// C[0:16·blocks][0:64·groups] = A · B over kp k pairs (a multiple of %d),", pairs)
	p("// in float32 from bfloat16 operands, overwriting C: A rows converted by")
	p("// rowsToBF16, lda uint16s apart; B groups of two bf16 panels")
	p("// (gemm_bf16.go's layout, 64·kp uint16s each, consecutive), each panel")
	p("// row of 32 columns loaded as two tiles of 16 (128 bytes apart); C rows")
	p("// ldc floats apart. TDPBF16PS sums each pair's products in float32, as")
	p("// VDPBF16PS does up to rounding.")
	p("TEXT ·gemmBF16AMX(SB), NOSPLIT, $16-64")
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
	p("\tMOVQ R9, cgroup-16(SP)")
	p("\tMOVQ groups+56(FP), R11")
	p("\tMOVQ R11, left-8(SP)")
	p("")
	p("bgroup:")
	p("\tMOVQ a+8(FP), SI")
	p("\tMOVQ cgroup-16(SP), R9")
	p("\tMOVQ blocks+48(FP), R11")
	p("")
	p("bblock:")
	for i := range 4 {
		w.amx(tilezero(i))
	}
	p("\tMOVQ SI, AX")
	p("\tMOVQ DI, BX")
	p("\tLEAQ (DI)(R8*1), R12")
	p("\tMOVQ kp+0(FP), CX")
	p("\tSHRQ $4, CX")
	p("")
	p("bstep:")
	w.amx(tileloadd(tileA, mem{rAX, rDX, 0}))
	w.amx(tileloadd(tileB[0], mem{rBX, r14, 0}))
	w.amx(tdpbf16ps(0, tileA, tileB[0]))
	w.amx(tileloadd(tileB[1], mem{rBX, r14, 64}))
	w.amx(tdpbf16ps(1, tileA, tileB[1]))
	w.amx(tileloadd(tileB[2], mem{r12, r14, 0}))
	w.amx(tdpbf16ps(2, tileA, tileB[2]))
	w.amx(tileloadd(tileB[3], mem{r12, r14, 64}))
	w.amx(tdpbf16ps(3, tileA, tileB[3]))
	p("\tADDQ $%d, AX", 4*pairs)
	p("\tADDQ $%d, BX", 128*pairs)
	p("\tADDQ $%d, R12", 128*pairs)
	p("\tDECQ CX")
	p("\tJNZ  bstep")
	p("")
	for i := range 4 {
		w.amx(tilestored(mem{r9, r10, 64 * i}, i))
	}
	p("")
	p("\t// The next block of rows.")
	p("\tMOVQ DX, R12")
	p("\tSHLQ $4, R12")
	p("\tADDQ R12, SI")
	p("\tMOVQ R10, R12")
	p("\tSHLQ $4, R12")
	p("\tADDQ R12, R9")
	p("\tDECQ R11")
	p("\tJNZ  bblock")
	p("")
	p("\t// The next group of panels.")
	p("\tLEAQ (DI)(R8*2), DI")
	p("\tADDQ $256, cgroup-16(SP)")
	p("\tDECQ left-8(SP)")
	p("\tJNZ  bgroup")
	p("")
	w.amx(tilerelease())
	p("\tRET")
}
