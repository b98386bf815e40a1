package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEncodings: every AMX instruction the kernel encodes is, byte for
// byte, what GNU as assembles from its Intel-syntax spelling.
func TestEncodings(t *testing.T) {
	as, err := exec.LookPath("as")
	if err != nil {
		t.Skip("no GNU as to check the encodings against:", err)
	}
	objcopy, err := exec.LookPath("objcopy")
	if err != nil {
		t.Skip("no objcopy to read what as wrote:", err)
	}
	seen := map[string]bool{}
	var src strings.Builder
	var want []byte
	var listed []instruction
	src.WriteString(".intel_syntax noprefix\n.text\n")
	for _, ins := range kernel().used {
		if seen[ins.gnu] {
			continue
		}
		seen[ins.gnu] = true
		src.WriteString(ins.gnu + "\n")
		want = append(want, ins.bytes...)
		listed = append(listed, ins)
	}
	dir := t.TempDir()
	s, o, bin := filepath.Join(dir, "amx.s"), filepath.Join(dir, "amx.o"), filepath.Join(dir, "amx.bin")
	if err := os.WriteFile(s, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(as, "--64", "-o", o, s).CombinedOutput(); err != nil {
		t.Fatalf("as: %v\n%s", err, out)
	}
	if out, err := exec.Command(objcopy, "-O", "binary", "-j", ".text", o, bin).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, out)
	}
	got, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		off := 0
		for _, ins := range listed {
			n := len(ins.bytes)
			if off+n > len(got) || !bytes.Equal(got[off:off+n], ins.bytes) {
				t.Fatalf("%s: encoded % x, as wrote % x", ins.gnu, ins.bytes, got[off:min(off+n, len(got))])
			}
			off += n
		}
		t.Fatalf("as wrote %d bytes, the encodings are %d", len(got), len(want))
	}
	t.Logf("%d instructions match GNU as", len(listed))
}
