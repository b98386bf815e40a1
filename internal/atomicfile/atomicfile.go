// Package atomicfile writes small files so that a reader, or a crash, sees
// the old content or the new, never part of either: the data is written to
// a temporary file in the same folder, which then takes the file's name.
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces the file at path with data, making its folder if missing.
func Write(path string, data []byte, perm fs.FileMode) error {
	return put(path, data, perm, os.Rename)
}

// Create writes data to a file at path that must not exist yet: when one
// does (another process made it first), the error wraps fs.ErrExist and
// the file is left as it was.
func Create(path string, data []byte, perm fs.FileMode) error {
	return put(path, data, perm, os.Link)
}

// put writes data aside and moves it into place with place (rename or link).
func put(path string, data []byte, perm fs.FileMode, place func(from, to string) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = place(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
