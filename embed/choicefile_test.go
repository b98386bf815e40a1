package embed

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChoiceFile: auto's measurement is recorded for the machine and read
// back, as it is, by the next model of that shape; a record of another
// machine is measured anew and replaced; one that cannot be read is
// reported and leaves the choice to the process.
func TestChoiceFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "encoder-choice.json")
	load := func(name string) *Local {
		t.Helper()
		l, err := NewLocalModel(name, LocalOptions{ChoiceFile: path})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	first := load("all-MiniLM-L6-v2")
	if first.Choice().Recorded {
		t.Fatalf("first load: %+v, want measured", first.Choice())
	}
	rec, err := readChoices(path)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Machine != machineID() || len(rec.Shapes) != 1 || rec.Shapes[shapeKey].Precision != first.Choice().Precision {
		t.Fatalf("record %+v after choosing %+v", rec, first.Choice())
	}

	// The record decides, whatever this process would measure: say fp32.
	fp := rateKey(roleDense, candidates(arithFP32)[0])
	rec.Shapes[shapeKey] = measuredChoice{Measured: map[string]float64{fp: 1000}}
	writeRecord(t, path, rec)
	second := load("bge-small-en-v1.5")
	if c := second.Choice(); !c.Recorded || c.Precision != PrecisionFP32 || c.Measured[fp] != 1000 {
		t.Fatalf("with a record of fp32: %+v", c)
	}

	// Another machine's (or build's) record is replaced by this one's.
	writeRecord(t, path, choiceRecord{Machine: "another CPU", Shapes: map[string]measuredChoice{shapeKey: {Measured: map[string]float64{fp: 1000}}}})
	third := load("e5-small-v2")
	if third.Choice().Recorded {
		t.Fatalf("with another machine's record: %+v, want measured", third.Choice())
	}
	if rec, err := readChoices(path); err != nil || rec.Machine != machineID() || rec.Shapes[shapeKey].Precision != third.Choice().Precision {
		t.Fatalf("record after another machine's: %+v, %v", rec, err)
	}

	// A file that is not a record: the process measures for itself and says
	// why it could not share.
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := autoRates(path, modelShape{384, 1536, 12})
	if err == nil || m.recorded || len(m.rates) == 0 || !strings.Contains(err.Error(), path) {
		t.Fatalf("corrupt record: %+v, err %v", m, err)
	}
	var syntax *json.SyntaxError
	if !errors.As(err, &syntax) {
		t.Errorf("corrupt record: err %v, want a JSON syntax error", err)
	}
}

// TestChoiceFileFirstWriterWins: of two processes recording at once into
// no file, the second to finish takes the first's record.
func TestChoiceFileFirstWriterWins(t *testing.T) {
	path := filepath.Join(t.TempDir(), "encoder-choice.json")
	theirs := choiceRecord{Machine: machineID(), Shapes: map[string]measuredChoice{shapeKey: {Precision: PrecisionFP32}}}
	if err := writeChoices(path, theirs, true); err != nil {
		t.Fatal(err)
	}
	mine := choiceRecord{Machine: machineID(), Shapes: map[string]measuredChoice{shapeKey: {Precision: PrecisionInt8}}}
	if err := writeChoices(path, mine, true); err != nil {
		t.Fatal(err)
	}
	if rec, err := readChoices(path); err != nil || rec.Shapes[shapeKey].Precision != PrecisionFP32 {
		t.Fatalf("record %+v, %v: want the first writer's fp32", rec, err)
	}
}

// shapeKey is the shape of the local models in a record.
const shapeKey = "384x1536x12"

func writeRecord(t *testing.T, path string, rec choiceRecord) {
	t.Helper()
	if err := writeChoices(path, rec, false); err != nil {
		t.Fatal(err)
	}
}
