package jarindex

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/jarindex/jartest"
)

// benchJarEnv, when set, makes the test binary index that jar and exit: the benchmark runs it
// as a child process to measure the indexer's own peak RSS (not the generator's).
const benchJarEnv = "PREFLIGHT_JARINDEX_BENCH_CHILD"

func TestMain(m *testing.M) {
	if p := os.Getenv(benchJarEnv); p != "" {
		j, err := IndexFile(context.Background(), p, Options{ClassVersions: true})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(len(j.Classes))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// writeBigJar writes an uber-jar-like archive: n class files of about per bytes each (a real
// constant pool plus an incompressible-ish string), half deflated, half stored.
func writeBigJar(tb testing.TB, p string, n, per int) int64 {
	f, err := os.Create(p)
	if err != nil {
		tb.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	zw := zip.NewWriter(bw)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestSpeed) })
	rng := rand.New(rand.NewPCG(1, 2))
	salt := make([]byte, per)
	for i := 0; i < n; i++ {
		for k := range salt {
			salt[k] = byte('!' + rng.IntN(90))
		}
		name := fmt.Sprintf("com/example/pkg%d/C%d", i%500, i)
		method := zip.Deflate
		if i%2 == 1 {
			method = zip.Store
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name + ".class", Method: method})
		if err != nil {
			tb.Fatal(err)
		}
		w.Write(jartest.ClassFile(jartest.Class{Name: name, Refs: []string{"org/apache/flink/api/common/functions/MapFunction"}, Salt: string(salt)}))
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	bw.Flush()
	fi, _ := f.Stat()
	f.Close()
	return fi.Size()
}

// BenchmarkIndex300MB indexes a ~300 MB jar with 100,000 class entries (central directory plus
// every class's version from its first bytes), and reports MB/s, entries/s and the peak RSS of a
// child process doing one index.
func BenchmarkIndex300MB(b *testing.B) {
	p := filepath.Join(b.TempDir(), "big.jar")
	const entries = 100_000
	size := writeBigJar(b, p, entries, 3700)
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j, err := IndexFile(context.Background(), p, Options{ClassVersions: true})
		if err != nil {
			b.Fatal(err)
		}
		if len(j.Classes) != entries {
			b.Fatalf("%d classes", len(j.Classes))
		}
		j.Close()
	}
	b.StopTimer()
	b.ReportMetric(float64(entries)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(size)/(1<<20), "jar-MiB")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchJarEnv+"="+p)
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("child: %v: %s", err, out)
	}
	b.ReportMetric(time.Since(start).Seconds(), "child-wall-s")
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MiB") // Maxrss is in KiB on Linux
		// CPU seconds of the child's one index: on a loaded machine wall time overstates cost.
		b.ReportMetric(float64(ru.Utime.Nano()+ru.Stime.Nano())/1e9, "child-cpu-s")
	}
}

// BenchmarkClassRefs parses constant pools (what the classpath check does for parent classes).
func BenchmarkClassRefs(b *testing.B) {
	p := filepath.Join(b.TempDir(), "refs.jar")
	const entries = 5_000
	size := writeBigJar(b, p, entries, 2000)
	j, err := IndexFile(context.Background(), p, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range j.Classes {
			if err := j.ClassRefs(&j.Classes[k], func([]byte) {}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkIndex20k is the quick variant (20,000 entries, ~70 MB) for profiling, with and
// without the class versions (directory only).
func BenchmarkIndex20k(b *testing.B) {
	p := filepath.Join(b.TempDir(), "mid.jar")
	const entries = 20_000
	size := writeBigJar(b, p, entries, 3700)
	for _, versions := range []bool{false, true} {
		b.Run(fmt.Sprintf("versions=%v", versions), func(b *testing.B) {
			b.SetBytes(size)
			for i := 0; i < b.N; i++ {
				j, err := IndexFile(context.Background(), p, Options{ClassVersions: versions})
				if err != nil {
					b.Fatal(err)
				}
				j.Close()
			}
			b.ReportMetric(float64(entries)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}
