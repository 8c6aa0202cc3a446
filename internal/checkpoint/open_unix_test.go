//go:build unix

package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestLoadFileFIFO: opening a FIFO nobody writes to fails at once as not a regular file.
func TestLoadFileFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := NewDecoder().ReadLayoutFile(context.Background(), fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a FIFO decoded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("opening a FIFO blocked")
	}
}

// TestReadLayoutFilesOddPaths: ReadLayoutFiles gives each file's Layout, or ReadLayoutFile's very
// error, for good and damaged checkpoints, a streamed one, a missing file, a folder, an empty
// file and a FIFO (which must not block).
func TestReadLayoutFilesOddPaths(t *testing.T) {
	paths, contents := batchFiles(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	odd := []string{filepath.Join(dir, "missing", "_metadata"), dir, empty, fifo}
	var names []string
	for range 3 {
		names = append(names, paths...)
		names = append(names, odd...)
	}
	// Each file's expected error, from ReadLayoutFile.
	wantErr := map[string]string{}
	for _, p := range append(paths, odd...) {
		if _, err := NewDecoder().ReadLayoutFile(context.Background(), p); err != nil {
			wantErr[p] = err.Error()
		}
	}
	for _, workers := range []int{1, 2} {
		done := make(chan error, 1)
		go func() {
			done <- ReadLayoutFiles(context.Background(), names, workers, func(i int, l *Layout, err error) error {
				p := names[i]
				if k := i % (len(paths) + len(odd)); k < len(paths) {
					checkSameLayout(t, p, contents[k], l, err)
				}
				if got := errString(err); got != wantErr[p] {
					t.Errorf("workers %d: %s: error %q, want %q", workers, p, got, wantErr[p])
				}
				return nil
			})
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(time.Minute):
			t.Fatal("ReadLayoutFiles blocked")
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
