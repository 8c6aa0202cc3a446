package uring

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// newReader returns a Reader, or skips the test where io_uring is not available (another OS,
// an old kernel, a seccomp profile that refuses it).
func newReader(t testing.TB, batch, bufSize int) *Reader {
	t.Helper()
	r, err := NewReader(batch, bufSize)
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("io_uring here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func writeFile(t testing.TB, path string, data []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRead(t *testing.T) {
	const bufSize = 4096
	r := newReader(t, 8, bufSize)
	dir := t.TempDir()
	rnd := rand.New(rand.NewPCG(1, 2))
	sized := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rnd.Uint32())
		}
		return writeFile(t, filepath.Join(dir, fmt.Sprintf("deep/er/f%d", n)), b)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path string
		// whole: Data is the file; else errOp is the failing step ("" for none: too large,
		// empty, or not a file to trust a single read of).
		whole bool
		errOp string
		errno syscall.Errno
	}{
		{"one byte", sized(1), true, "", 0},
		{"small", sized(100), true, "", 0},
		{"one short of the buffer", sized(bufSize - 1), true, "", 0},
		{"as large as the buffer", sized(bufSize), false, "", 0},
		{"larger than the buffer", sized(3 * bufSize), false, "", 0},
		{"empty", sized(0), false, "", 0},
		{"missing", filepath.Join(dir, "nope/_metadata"), false, "open", syscall.ENOENT},
		{"directory", dir, false, "read", syscall.EISDIR},
		{"FIFO without a writer does not block", fifo, false, "fadvise", syscall.ESPIPE},
		{"FIFO with data is not read", fifoWithData(t, dir), false, "fadvise", syscall.ESPIPE},
		{"empty name", "", false, "open", syscall.EINVAL},
		{"NUL in the name", dir + "/a\x00b", false, "open", syscall.EINVAL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Alone and in the middle of a full batch: the slots and results must not mix.
			others := []string{sized(10), sized(2000), sized(bufSize + 1)}
			for _, names := range [][]string{{tc.path}, append(append([]string{others[0], others[1]}, tc.path), others...)} {
				at := min(2, len(names)-1) // tc.path's place
				done := make(chan struct{})
				var files []File
				var err error
				go func() { defer close(done); files, err = r.Read(names) }()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Fatal("Read blocked")
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(files) != len(names) {
					t.Fatalf("%d files for %d names", len(files), len(names))
				}
				for i, f := range files {
					checkFile(t, names[i], f)
				}
				f := files[at]
				if f.Whole != tc.whole {
					t.Errorf("Whole = %v, want %v (err %v)", f.Whole, tc.whole, f.Err)
				}
				var pe *os.PathError
				switch {
				case tc.errOp == "" && f.Err != nil:
					t.Errorf("error %v, want none", f.Err)
				case tc.errOp != "" && (!errors.As(f.Err, &pe) || pe.Op != tc.errOp || pe.Path != tc.path || !errors.Is(f.Err, tc.errno)):
					t.Errorf("error %v, want a %s error on %q with %v", f.Err, tc.errOp, tc.path, tc.errno)
				}
			}
		})
	}
}

// fifoWithData makes a FIFO holding "data" and checks, when the test ends, that the data is
// still there (a Reader must not take a FIFO's data from its writer).
func fifoWithData(t *testing.T, dir string) string {
	fifo := filepath.Join(dir, "fifo-with-data")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	rw, err := os.OpenFile(fifo, os.O_RDWR, 0) // a writer that can read back what it wrote
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw.Write([]byte("data")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		defer rw.Close()
		rw.SetReadDeadline(time.Now().Add(time.Second)) // the FIFO's own writer: no EOF, a timeout
		b := make([]byte, 16)
		if n, err := rw.Read(b); err != nil || string(b[:n]) != strings.Repeat("data", n/4) || n == 0 {
			t.Errorf("the FIFO's data was taken: %q left (%v)", b[:n], err)
		}
	})
	return fifo
}

// checkFile fails t unless f agrees with the file at name: Data is the whole file when Whole.
func checkFile(t testing.TB, name string, f File) {
	t.Helper()
	if !f.Whole {
		if f.Data != nil {
			t.Errorf("%s: Data set on a file not read whole", name)
		}
		return
	}
	if fi, err := os.Stat(name); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("%s: read whole by the Reader but not a regular file (%v)", name, err)
		return
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%s: read whole by the Reader but os.ReadFile fails: %v", name, err)
	}
	if !bytes.Equal(f.Data, want) {
		t.Errorf("%s: %d bytes, want the file's %d", name, len(f.Data), len(want))
	}
	if f.Err != nil {
		t.Errorf("%s: Whole with error %v", name, f.Err)
	}
}

// TestReadManyBatches reads a few hundred files of random sizes in batches of every length,
// reusing the Reader, and compares each with os.ReadFile.
func TestReadManyBatches(t *testing.T) {
	const bufSize = 8 << 10
	r := newReader(t, 16, bufSize)
	names := manyFiles(t, 300, 2*bufSize)
	for at, n := 0, 1; at < len(names); at, n = at+n, n%r.Batch()+1 {
		batch := names[at:min(at+n, len(names))]
		files, err := r.Read(batch)
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range files {
			checkFile(t, batch[i], f)
			if fi, err := os.Stat(batch[i]); err == nil && fi.Size() > 0 && fi.Size() < bufSize && !f.Whole {
				t.Errorf("%s: %d bytes, not read whole (%v)", batch[i], fi.Size(), f.Err)
			}
		}
	}
	if _, err := r.Read(make([]string, r.Batch()+1)); err == nil {
		t.Error("a batch larger than Batch was taken")
	}
}

// TestReadersInParallel runs Readers on several goroutines over the same files (for -race).
func TestReadersInParallel(t *testing.T) {
	names := manyFiles(t, 64, 6000)
	var wg sync.WaitGroup
	for range 4 {
		r := newReader(t, 4, 4096)
		wg.Go(func() {
			for at := 0; at < len(names); at += r.Batch() {
				batch := names[at:min(at+r.Batch(), len(names))]
				files, err := r.Read(batch)
				if err != nil {
					t.Error(err)
					return
				}
				for i, f := range files {
					checkFile(t, batch[i], f)
				}
			}
		})
	}
	wg.Wait()
}

func TestClosedReader(t *testing.T) {
	r := newReader(t, 2, 64)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := r.Read([]string{"x"}); err == nil {
		t.Fatal("Read on a closed Reader did not fail")
	}
}

func TestNewReaderRejectsBadSizes(t *testing.T) {
	for _, tc := range [][2]int{{0, 64}, {4, 0}, {-1, 64}, {1 << 20, 64}} {
		if r, err := NewReader(tc[0], tc[1]); err == nil {
			r.Close()
			t.Errorf("NewReader(%d, %d) accepted", tc[0], tc[1])
		}
	}
}

// manyFiles writes n files of random sizes below maxSize, each in a folder of its own (as
// checkpoints are), and returns their paths.
func manyFiles(t testing.TB, n, maxSize int) []string {
	t.Helper()
	dir := t.TempDir()
	rnd := rand.New(rand.NewPCG(uint64(n), uint64(maxSize)))
	names := make([]string, n)
	for i := range names {
		b := make([]byte, rnd.IntN(maxSize))
		for k := range b {
			b[k] = byte(rnd.Uint32())
		}
		names[i] = writeFile(t, filepath.Join(dir, fmt.Sprintf("job-%d/chk-%d/_metadata", i%7, i)), b)
	}
	return names
}

// BenchmarkRead reads a folder of small files (12 KiB on average, one folder each) through a
// Reader, and with the four plain system calls a file costs otherwise, for comparison.
func BenchmarkRead(b *testing.B) {
	names := manyFiles(b, 600, 24<<10)
	var total int64
	for _, n := range names {
		fi, _ := os.Stat(n)
		total += fi.Size()
	}
	b.Run("uring", func(b *testing.B) {
		r := newReader(b, 8, 64<<10)
		b.SetBytes(total)
		for b.Loop() {
			for at := 0; at < len(names); at += r.Batch() {
				if _, err := r.Read(names[at:min(at+r.Batch(), len(names))]); err != nil {
					b.Fatal(err)
				}
			}
		}
		report(b, len(names), total)
	})
	b.Run("syscalls", func(b *testing.B) {
		buf := make([]byte, 64<<10)
		b.SetBytes(total)
		for b.Loop() {
			for _, n := range names {
				fd, err := syscall.Open(n, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
				if err != nil {
					b.Fatal(err)
				}
				var st syscall.Stat_t
				if err := syscall.Fstat(fd, &st); err != nil {
					b.Fatal(err)
				}
				if _, err := syscall.Read(fd, buf[:st.Size]); err != nil {
					b.Fatal(err)
				}
				syscall.Close(fd)
			}
		}
		report(b, len(names), total)
	})
}

func report(b *testing.B, files int, total int64) {
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(total)*float64(b.N)/s/1e6, "MB/s")
	b.ReportMetric(float64(files)*float64(b.N)/s, "files/s")
}
