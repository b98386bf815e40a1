package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesAndCreateRefusesExisting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "state.json")
	if err := Write(path, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "two" {
		t.Fatalf("after two writes the file holds %q", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if err := Create(path, []byte("three"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create over an existing file: %v, want fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "two" {
		t.Fatalf("a refused Create changed the file to %q", b)
	}
	fresh := filepath.Join(filepath.Dir(path), "fresh")
	if err := Create(fresh, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 2 {
		t.Errorf("the folder holds %d files, want 2 (no temporary file left)", len(entries))
	}
}
