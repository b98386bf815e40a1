package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCursorKeyOutlivesARestart: the key that signs cursors is made once
// in the data folder (mode 0600) and read back after, so cursors outlive a
// restart; PAPERSEARCH_CURSOR_KEY, for instances that share an address,
// wins.
func TestCursorKeyOutlivesARestart(t *testing.T) {
	cfg := Config{DataDir: filepath.Join(t.TempDir(), "data")}
	first, err := cfg.cursorKey()
	if err != nil || len(first) != 32 {
		t.Fatalf("%x %v", first, err)
	}
	again, err := cfg.cursorKey()
	if err != nil || !bytes.Equal(first, again) {
		t.Errorf("the key changed between starts: %x, %x (%v)", first, again, err)
	}
	if fi, err := os.Stat(filepath.Join(cfg.DataDir, "cursor.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("cursor.key: %v %v", fi.Mode(), err)
	}
	cfg.CursorKey = "shared between instances"
	if k, err := cfg.cursorKey(); err != nil || string(k) != cfg.CursorKey {
		t.Errorf("PAPERSEARCH_CURSOR_KEY not used: %q %v", k, err)
	}
}
