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

// A machine's measurement of its kernels, kept in a file so that every
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

// measuredChoice is the candidates' rates for one model shape, keyed as
// Choice.Measured, which every process's plan is chosen from (and, for
// the reader, the dense arithmetic auto chooses from them).
type measuredChoice struct {
	Precision Precision          `json:"precision,omitempty"`
	Measured  map[string]float64 `json:"measured_gops"`
}

// key names the shape in a record.
func (s modelShape) key() string { return fmt.Sprintf("%dx%dx%d", s.hidden, s.intermediate, s.heads) }

// kernelsRevision counts the changes to the kernels, or to the work
// around them, that moved their rates enough to change a choice: a record
// of an earlier revision is measured anew. 2: an int8 product's inputs
// and outlier channels with AVX-512 (int8 on AMX went from 1.05 to
// 1.4-1.6 times bf16's rate on an Intel Xeon, past preferMargin).
const kernelsRevision = 2

// machineID names this CPU (its model name where the OS says it, its
// architecture and the features the kernels use) and the kernels this
// build runs on it, with their revision.
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
	dense, _, attention := measured()
	for _, k := range dense {
		fmt.Fprintf(&b, " %s/%s", k.arith.precision(), k.name)
	}
	for _, k := range attention {
		fmt.Fprintf(&b, " attention:%s/%s", k.arith.precision(), k.name)
	}
	fmt.Fprintf(&b, "; kernels r%d", kernelsRevision)
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

// autoRates returns the candidates' rates for a model of shape s: those
// recorded in path for this machine and build, or, when there are none
// (or path is ""), those measure finds, then recorded in path. A record
// written meanwhile by another process is the one used. A file that
// cannot be read or written costs only the sharing (the error says why).
func autoRates(path string, s modelShape) (measurement, error) {
	if path == "" {
		return measurement{shape: s, rates: measure(s)}, nil
	}
	machine, shape := machineID(), s.key()
	recorded := func(rec choiceRecord) (measurement, bool) {
		if c, ok := rec.Shapes[shape]; ok && rec.Machine == machine && len(c.Measured) > 0 {
			return measurement{shape: s, rates: c.Measured, recorded: true}, true
		}
		return measurement{}, false
	}
	rec, err := readChoices(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return measurement{shape: s, rates: measure(s)}, err
	}
	if m, ok := recorded(rec); ok {
		return m, nil
	}
	m := measurement{shape: s, rates: measure(s)}
	if rec.Machine != machine {
		rec = choiceRecord{Machine: machine}
	}
	if rec.Shapes == nil {
		rec.Shapes = map[string]measuredChoice{}
	}
	c := measuredChoice{Measured: m.rates}
	if pl, err := choosePlan(m.rates, PrecisionAuto, false); err == nil {
		c.Precision = pl.dense.arith.precision()
	}
	rec.Shapes[shape] = c
	if err := writeChoices(path, rec, errors.Is(err, fs.ErrNotExist)); err != nil {
		return m, err
	}
	// Another process may have recorded its measurement first: use it.
	if rec, err := readChoices(path); err == nil {
		if theirs, ok := recorded(rec); ok {
			theirs.recorded = false
			return theirs, nil
		}
	}
	return m, nil
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
