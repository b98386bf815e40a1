package main

import "fmt"

// The encodings of the AMX instructions the kernels use (VEX, register and
// SIB memory forms), with their GNU spelling for TestEncodings.

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
