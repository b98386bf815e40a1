package embed

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"

	"github.com/papersearch/papersearch/internal/atomicfile"
	"golang.org/x/sys/cpu"
)

// A machine's measured choice of arithmetic, kept in a file so that every
// process on it (the server, `papersearch mcp`, the CLI) encodes in the
// same arithmetic: measured apart, under different loads, two of them
// once chose int8 and fp32 and their vectors differed in the third
// decimal.

// choiceRecord is the file's content: the measurement of one machine and
// build, by model shape.
type choiceRecord struct {
	// Machine names the CPU and the kernels this build has for it; a
	// record of another machine or build is measured anew.
	Machine string                    `json:"machine"`
	Shapes  map[string]measuredChoice `json:"shapes"`
}

// measuredChoice is the arithmetic chosen for one model shape and the
// rates it was chosen by.
type measuredChoice struct {
	Precision Precision             `json:"precision"`
	Measured  map[Precision]float64 `json:"measured_gops"`
}

// machineID names this CPU (its model name where the OS says it, its
// architecture and the features the kernels use) and the kernels this
// build runs on it.
func machineID() string {
	var b strings.Builder
	b.WriteString(runtime.GOARCH)
	if name := cpuModelName(); name != "" {
		b.WriteString(" " + name)
	}
	for _, f := range []struct {
		name string
		has  bool
	}{{"avx2", cpu.X86.HasAVX2}, {"fma", cpu.X86.HasFMA}, {"avx512f", cpu.X86.HasAVX512F},
		{"avx512bf16", cpu.X86.HasAVX512BF16}, {"avx512vnni", cpu.X86.HasAVX512VNNI},
		{"amxbf16", cpu.X86.HasAMXBF16}, {"amxint8", cpu.X86.HasAMXInt8}} {
		if f.has {
			b.WriteString(" " + f.name)
		}
	}
	b.WriteString(";")
	for _, a := range []arithmetic{arithFP32, arithBF16, arithInt8} {
		if k, err := kernelsFor(a); err == nil {
			fmt.Fprintf(&b, " %s=%s", a.precision(), k.name)
		}
	}
	return b.String()
}

// cpuModelName is the CPU's model name from /proc/cpuinfo, or "" where
// there is none.
func cpuModelName() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(data)) {
		key, value, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return ""
}

// autoArithmetic returns the arithmetic PrecisionAuto runs a model of this
// shape in, the rates it was chosen by, and whether they were read from
// path: the choice recorded there for this machine and build, or, when
// there is none (or path is ""), the one chooseArithmetic measures, then
// recorded in path. A record written meanwhile by another process is the
// one used. A file that cannot be read or written costs only the sharing
// (the error says why).
func autoArithmetic(path string, hidden, intermediate int) (arithmetic, map[Precision]float64, bool, error) {
	if path == "" {
		a, m := chooseArithmetic(hidden, intermediate)
		return a, m, false, nil
	}
	machine, shape := machineID(), fmt.Sprintf("%dx%d", hidden, intermediate)
	recorded := func(rec choiceRecord) (arithmetic, map[Precision]float64, bool) {
		if c, ok := rec.Shapes[shape]; ok && rec.Machine == machine {
			if a, ok := arithmeticOf(c.Precision); ok {
				return a, c.Measured, true
			}
		}
		return 0, nil, false
	}
	rec, err := readChoices(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		a, m := chooseArithmetic(hidden, intermediate)
		return a, m, false, err
	}
	if a, m, ok := recorded(rec); ok {
		return a, m, true, nil
	}
	a, m := chooseArithmetic(hidden, intermediate)
	if rec.Machine != machine {
		rec = choiceRecord{Machine: machine}
	}
	if rec.Shapes == nil {
		rec.Shapes = map[string]measuredChoice{}
	}
	rec.Shapes[shape] = measuredChoice{Precision: a.precision(), Measured: m}
	if err := writeChoices(path, rec, errors.Is(err, fs.ErrNotExist)); err != nil {
		return a, m, false, err
	}
	// Another process may have recorded its measurement first: use it.
	if rec, err := readChoices(path); err == nil {
		if b, bm, ok := recorded(rec); ok {
			return b, bm, false, nil
		}
	}
	return a, m, false, nil
}

// readChoices reads the record at path.
func readChoices(path string) (choiceRecord, error) {
	var rec choiceRecord
	data, err := os.ReadFile(path)
	if err != nil {
		return rec, fmt.Errorf("encoder choice %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return choiceRecord{}, fmt.Errorf("encoder choice %s: %w", path, err)
	}
	return rec, nil
}

// writeChoices writes rec to path through a temporary file: when fresh
// (there was no file), only if there still is none, so that of two
// processes measuring at once the first to finish is the one both use;
// otherwise in place of the stale record.
func writeChoices(path string, rec choiceRecord, fresh bool) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if fresh {
		err = atomicfile.Create(path, data, 0o644)
		if errors.Is(err, fs.ErrExist) {
			return nil // another process's record, read next
		}
	} else {
		err = atomicfile.Write(path, data, 0o644)
	}
	if err != nil {
		return fmt.Errorf("encoder choice: %w", err)
	}
	return nil
}
