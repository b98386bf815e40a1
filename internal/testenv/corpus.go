package testenv

import (
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
)

// MLPapersFile is the shared corpus of 29,100 ML paper records, relative to
// the directory that holds the module: tests and benchmarks only.
const MLPapersFile = "shared/data/papers/ml-papers.jsonl.gz"

// MLPapers returns the first n records of the shared ML paper corpus (all
// of them for n ≤ 0), read from MLPapersFile beside the module's root, or
// stops t with Missing when the corpus is not there.
func MLPapers(t testing.TB, n int) []papersearch.Paper {
	t.Helper()
	f, err := os.Open(Shared(t, MLPapersFile))
	if err != nil {
		Missing(t, "the test needs %s beside the module: %v", MLPapersFile, err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := seeds.NewReader(zr, seeds.JSONL)
	if err != nil {
		t.Fatal(err)
	}
	var out []papersearch.Paper
	for n <= 0 || len(out) < n {
		p, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read %s: %v", MLPapersFile, err)
		}
		out = append(out, p)
	}
	return out
}

// CSAbstructDir is the shared CSAbstruct data set (train, dev and test
// splits), relative to the directory that holds the module.
const CSAbstructDir = "shared/data/csabstruct"

// Shared returns the path of rel (MLPapersFile, CSAbstructDir) beside the
// module's root, or stops t with Missing when it is not there.
func Shared(t testing.TB, rel string) string {
	t.Helper()
	path, err := beside(rel)
	if err == nil {
		_, err = os.Stat(path)
	}
	if err != nil {
		Missing(t, "the test needs %s beside the module: %v", rel, err)
	}
	return path
}

// beside returns rel resolved against the parent of the module's root (the
// nearest directory up from here with a go.mod).
func beside(rel string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(dir), rel), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
