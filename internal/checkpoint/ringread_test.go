package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
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

// TestReadLayoutFilesLargeLayoutsWait: with a slow fn, chunks run ahead by up to 2 × workers
// chunks of small files, but a file the ring did not read whole (a large one) is decoded only
// within 2 × workers files of fn, the window ReadLayoutFiles has without chunks.
func TestReadLayoutFilesLargeLayoutsWait(t *testing.T) {
	paths, contents := batchFiles(t)
	var small, large []string
	for i, b := range contents {
		if len(b) < ringBufSize {
			small = append(small, paths[i])
		} else {
			large = append(large, paths[i])
		}
	}
	if len(small) == 0 || len(large) == 0 {
		t.Fatal("batchFiles has no small or no large file")
	}
	var names []string
	for k := range 96 {
		if k%3 == 2 {
			names = append(names, large[k%len(large)])
		} else {
			names = append(names, small[k%len(small)])
		}
	}
	readModes(t, func(t *testing.T) {
		const workers = 2
		var given, ahead, worst atomic.Int64
		off := ringUse.Load() == ringOff
		testHookDecoding = func(i int, read bool) {
			if off && read {
				t.Errorf("file %d read by a ring with io_uring off", i)
			}
			if d := int64(i) - given.Load(); read && d > ahead.Load() {
				ahead.Store(d) // (racy max: only for the log)
			} else if !read && d >= 2*workers {
				worst.Store(d)
			}
		}
		defer func() { testHookDecoding = nil }()
		err := ReadLayoutFiles(context.Background(), names, workers, func(i int, l *Layout, err error) error {
			time.Sleep(200 * time.Microsecond) // a slow reader: the workers run ahead
			given.Add(1)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if d := worst.Load(); d != 0 {
			t.Fatalf("a large file was decoded %d files ahead of fn (window %d)", d, 2*workers)
		}
		t.Logf("small files decoded up to %d files ahead of fn", ahead.Load())
	})
}
