package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestReadPass: the read floor reads empty, small and multi-buffer files without failing any,
// and a path that cannot be opened ends the pass with its error.
func TestReadPass(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i, size := range []int{0, 10, 4 << 20, 5<<20 + 3} {
		p := filepath.Join(dir, string(rune('a'+i)))
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	for _, workers := range []int{0, 1, 3} {
		var failed []int
		if err := readPass(paths, workers)(func(i int) { failed = append(failed, i) }); err != nil || len(failed) > 0 {
			t.Fatalf("%d workers: %v, failed %v", workers, err, failed)
		}
	}
	if err := readPass(append(paths, filepath.Join(dir, "missing")), 2)(func(int) {}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}
