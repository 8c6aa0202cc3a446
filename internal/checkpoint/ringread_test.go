package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// readModes runs f once with each way ReadLayoutFiles reads files: the plain system calls and,
// where the kernel allows it, io_uring.
func readModes(t *testing.T, f func(t *testing.T)) {
	saved := ringUse.Load()
	defer ringUse.Store(saved)
	for _, mode := range []struct {
		name string
		use  int32
	}{{"syscalls", ringOff}, {"io_uring", ringUnknown}} {
		t.Run(mode.name, func(t *testing.T) {
			ringUse.Store(mode.use)
			if mode.use != ringOff && NewDecoder().fileRing() == nil {
				t.Skip("io_uring is not available here")
			}
			f(t)
		})
	}
}

// TestReadLayoutFilesReadModes: whichever way the files are read, ReadLayoutFiles gives each
// file's Layout, or ReadLayoutFile's very error, for good and damaged checkpoints, one larger
// than a ring's buffer, one streamed, a missing file, a folder, an empty file and a FIFO
// (which must not block).
func TestReadLayoutFilesReadModes(t *testing.T) {
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
	for range 6 { // enough files for chunks of several files with 1 and 2 workers
		names = append(names, paths...)
		names = append(names, odd...)
	}
	if !slices.ContainsFunc(contents, func(b []byte) bool { return len(b) >= ringBufSize }) {
		t.Fatal("no file as large as a ring's buffer")
	}
	// Each file's expected error, from ReadLayoutFile.
	wantErr := map[string]string{}
	for _, p := range append(paths, odd...) {
		if _, err := NewDecoder().ReadLayoutFile(context.Background(), p); err != nil {
			wantErr[p] = err.Error()
		}
	}
	readModes(t, func(t *testing.T) {
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
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
