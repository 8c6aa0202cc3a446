package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/testutil"
)

func BenchmarkReadLayoutFixtures(b *testing.B) {
	paths, _ := filepath.Glob(filepath.Join(fixturesDir, "*.metadata"))
	if len(paths) == 0 {
		b.Skip("fixtures not available")
	}
	var files [][]byte
	var total int64
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, data)
		total += int64(len(data))
	}
	for _, bc := range []struct {
		name string
		read func([]byte) error
	}{
		{"ReadLayoutBytes", func(d []byte) error { _, err := readLayoutBytes(d); return err }},
		{"ReadLayout", func(d []byte) error { _, err := ReadLayout(bytes.NewReader(d)); return err }},
		{"ReadBytes", func(d []byte) error { _, err := ReadBytes(d); return err }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(total)
			for b.Loop() {
				for _, f := range files {
					if err := bc.read(f); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// largeUnionFile generates a file dominated by offset arrays: one operator of parallelism 4
// whose subtasks each hold a UNION state of n offsets and a SPLIT_DISTRIBUTE state of n/8.
func largeUnionFile(b *testing.B, n int) []byte {
	union := make([]int64, n)
	for i := range union {
		union[i] = 100 + int64(i)*24 + int64(i%3) // three element sizes, interleaved
	}
	end := union[n-1] + 24
	split := make([]int64, n/8)
	for i := range split {
		split[i] = end + int64(i)*40
	}
	size := end + int64(len(split))*40
	return generate(b, func(i int) *OperatorStateHandle {
		return &OperatorStateHandle{Tag: TagPartitionableOperatorStateHandle, States: []StateEntry{
			{Name: "union", Mode: Union, Offsets: union},
			{Name: "split", Mode: SplitDistribute, Offsets: split},
		}, Delegate: &FileStateHandle{Path: "s3://bucket/chk-1/op", StateSize: size}}
	})
}

// largeInlineFile generates a file dominated by inline bytes: four subtasks with an inline
// delegate of n bytes each.
func largeInlineFile(b *testing.B, n int) []byte {
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i)
	}
	return generate(b, func(i int) *OperatorStateHandle {
		return &OperatorStateHandle{Tag: TagPartitionableOperatorStateHandle, States: []StateEntry{
			{Name: "split", Mode: SplitDistribute, Offsets: []int64{100, int64(n/2) + 100}},
		}, Delegate: &ByteStreamStateHandle{Name: "file:/x", Data: data}}
	})
}

func generate(b *testing.B, handle func(int) *OperatorStateHandle) []byte {
	m := &Metadata{Version: 6, CheckpointID: 1, Trailer: mustHex(templateA)}
	op := OperatorState{ID: OperatorIDFromUID("source"), UID: "source", Parallelism: 4, MaxParallelism: 128}
	for i := range 4 {
		op.Subtasks = append(op.Subtasks, SubtaskEntry{Index: int32(i), State: &SubtaskState{
			ManagedOperatorState: OperatorStateSlot{Present: 1, Handle: handle(i)}}})
	}
	m.Operators = []OperatorState{op}
	var buf bytes.Buffer
	if err := Write(&buf, m); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// onlyReader hides the bytes.Reader so ReadLayout sees a plain stream.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// peakHeap runs f and returns the peak growth of HeapInuse over the level before, sampled.
func peakHeap(f func()) uint64 {
	runtime.GC()
	heapInuse := func() uint64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	base := heapInuse()
	stop := testutil.SamplePeak(heapInuse)
	f()
	return stop() - base
}

// reportCPU adds the throughput per CPU-second of the process (all goroutines, GC included),
// which a loaded machine distorts less than wall time.
func reportCPU(b *testing.B, cpu time.Duration, bytesPerOp int64) {
	if cpu <= 0 {
		return
	}
	b.ReportMetric(float64(bytesPerOp)*float64(b.N)/cpu.Seconds()/1e6, "MB/cpu-s")
}

func benchLarge(b *testing.B, data []byte) {
	b.Run("ReadLayoutBytes", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		cpu0 := testutil.CPUTime()
		for b.Loop() {
			if _, err := readLayoutBytes(data); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, testutil.CPUTime()-cpu0, int64(len(data)))
	})
	b.Run("ReadLayoutStream", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		cpu0 := testutil.CPUTime()
		for b.Loop() {
			if _, err := ReadLayout(onlyReader{bytes.NewReader(data)}); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, testutil.CPUTime()-cpu0, int64(len(data)))
		b.StopTimer()
		peak := peakHeap(func() {
			if _, err := ReadLayout(onlyReader{bytes.NewReader(data)}); err != nil {
				b.Fatal(err)
			}
		})
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	})
}

// The default variants are about 100 MiB; set PREFLIGHT_BENCH_1G=1 for the 1 GiB files.
func largeScale() int {
	if os.Getenv("PREFLIGHT_BENCH_1G") != "" {
		return 10
	}
	return 1
}

func BenchmarkLargeUnionOffsets(b *testing.B) {
	// 4 subtasks × (n + n/8) offsets × 8 bytes: n = 3.3M ≈ 120 MiB; ×10 ≈ 1.2 GiB.
	data := largeUnionFile(b, 3_300_000*largeScale())
	b.Logf("file: %d MiB", len(data)>>20)
	benchLarge(b, data)
}

func BenchmarkLargeInlineBytes(b *testing.B) {
	data := largeInlineFile(b, 26_000_000*largeScale())
	b.Logf("file: %d MiB", len(data)>>20)
	benchLarge(b, data)
}

// BenchmarkCorpusDecode decodes every _metadata file of the shared corpus in one process:
// file by file as the engine does (os.Open + ReadLayout), with one Decoder, and with
// ReadLayoutFiles on GOMAXPROCS workers. MB/s counts the files' bytes; peak-heap-MiB is the
// heap growth during one pass.
func BenchmarkCorpusDecode(b *testing.B) {
	var paths []string
	var total int64
	for _, f := range metadataCorpus(b) {
		fi, err := os.Stat(f.path)
		if err != nil {
			b.Fatal(err)
		}
		paths = append(paths, f.path)
		total += fi.Size()
	}
	b.Logf("%d files, %d bytes", len(paths), total)
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		pass func() error
	}{
		{"PerFileReadLayout", func() error {
			for _, p := range paths {
				f, err := os.Open(p)
				if err != nil {
					return err
				}
				_, _ = ReadLayout(f) // malformed corpus files count like the others
				f.Close()
			}
			return nil
		}},
		{"Decoder", func() error {
			x := NewDecoder()
			for _, p := range paths {
				if _, err := x.ReadLayoutFile(ctx, p); errors.Is(err, os.ErrNotExist) {
					return err
				}
			}
			return nil
		}},
		{"ReadLayoutFiles", func() error {
			return ReadLayoutFiles(ctx, paths, 0, func(_ int, _ *Layout, err error) error {
				if errors.Is(err, os.ErrNotExist) {
					return err
				}
				return nil
			})
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(total)
			cpu0 := testutil.CPUTime()
			for b.Loop() {
				if err := bc.pass(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(paths))*float64(b.N)/b.Elapsed().Seconds(), "files/s")
			reportCPU(b, testutil.CPUTime()-cpu0, total)
			b.StopTimer()
			var err error
			peak := peakHeap(func() { err = bc.pass() })
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}
