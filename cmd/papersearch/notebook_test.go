package main

import (
	"os"
	"os/exec"
	"path/filepath"
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
	cmd.Env = append(os.Environ(), "PAPERSEARCH_URL="+base, "PAPERSEARCH_NOTEBOOK_OUT="+out, "MPLBACKEND=Agg")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the notebook failed: %v\n%s", err, b)
	}
	for _, f := range []string{"executed.ipynb", "robot-manipulation.csv", "scores.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("the notebook did not produce %s: %v", f, err)
		}
	}
}
