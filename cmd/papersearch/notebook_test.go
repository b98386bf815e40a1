package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/papersearch/papersearch/internal/testenv"
)

// TestNotebook executes examples/papersearch.ipynb against a live service
// with Jupyter; any cell that raises fails the test.
func TestNotebook(t *testing.T) {
	nbconvert, err := exec.LookPath("jupyter-nbconvert")
	if err != nil {
		testenv.Missing(t, "jupyter-nbconvert is not installed (Debian: jupyter-nbconvert python3-pandas python3-requests python3-matplotlib python3-ipykernel; .ci/run installs them)")
	}
	setEnv(t)
	base, _, stop := startServe(t)
	defer stop()
	out := t.TempDir()
	cmd := exec.Command(nbconvert, "--to", "notebook", "--execute", "--ExecutePreprocessor.timeout=180",
		"--output-dir", out, "--output", "executed", "../../examples/papersearch.ipynb")
	// The kernel runs as a user's would: matplotlib's backend is Jupyter's
	// inline one, whatever this process's environment says.
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "MPLBACKEND=") })
	cmd.Env = append(env, "PAPERSEARCH_URL="+base, "PAPERSEARCH_NOTEBOOK_OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the notebook failed: %v\n%s", err, b)
	}
	// The plot cell shows its figure inline: an image/png output.
	raw, err := os.ReadFile(filepath.Join(out, "executed.ipynb"))
	if err != nil {
		t.Fatal(err)
	}
	var nb struct {
		Cells []struct {
			Source  any `json:"source"`
			Outputs []struct {
				Data map[string]any `json:"data"`
			} `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(raw, &nb); err != nil {
		t.Fatal(err)
	}
	shown := false
	for _, c := range nb.Cells {
		for _, o := range c.Outputs {
			if _, ok := o.Data["image/png"]; ok && strings.Contains(fmt.Sprint(c.Source), "plot.barh") {
				shown = true
			}
		}
	}
	if !shown {
		t.Error("the plot cell shows no figure inline (no image/png output)")
	}
	for _, f := range []string{"executed.ipynb", "robot-manipulation.csv", "scores.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("the notebook did not produce %s: %v", f, err)
		}
	}
}
