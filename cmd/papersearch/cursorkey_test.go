package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/papersearch/papersearch/search/sqlite"
	"github.com/papersearch/papersearch/search/storetest"
)

// TestCursorKeyIsTheStores: the key that signs cursors is made once and
// kept in the store's records, so every process on the store (a second
// server, the next start) signs and accepts the same cursors; a key an
// earlier version kept in the data folder is taken over;
// PAPERSEARCH_CURSOR_KEY wins.
func TestCursorKeyIsTheStores(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "papers.db")
	open := func() *sqlite.Store {
		s, err := sqlite.Open(ctx, path, storetest.Model)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	cfg := Config{DataDir: filepath.Join(t.TempDir(), "data")}
	first, err := cfg.cursorKey(ctx, open())
	if err != nil || len(first) != 32 {
		t.Fatalf("%x %v", first, err)
	}
	again, err := Config{DataDir: t.TempDir()}.cursorKey(ctx, open()) // another process, another folder
	if err != nil || !bytes.Equal(first, again) {
		t.Errorf("two processes on one store got two keys: %x, %x (%v)", first, again, err)
	}
	// An earlier version's key, in the data folder of a store that keeps none yet.
	old := bytes.Repeat([]byte("k"), 32)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "cursor.key"), old, 0o600)
	fresh, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "papers.db"), storetest.Model)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if k, err := (Config{DataDir: dir}).cursorKey(ctx, fresh); err != nil || !bytes.Equal(k, old) {
		t.Errorf("the data folder's key was not taken over: %q %v", k, err)
	}
	cfg.CursorKey = "shared between instances"
	if k, err := cfg.cursorKey(ctx, open()); err != nil || string(k) != cfg.CursorKey {
		t.Errorf("PAPERSEARCH_CURSOR_KEY not used: %q %v", k, err)
	}
}
