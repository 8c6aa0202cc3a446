// Command corpusdecode decodes every _metadata file of a corpus in one process and prints the
// throughput, so that bench/run.sh can compare it with another decoder on the same files and
// the same machine. The files come from a MANIFEST.tsv (rows of kind "metadata", paths relative
// to the manifest's folder) or from a list of paths on stdin.
//
// It runs -passes passes and prints the best as one Markdown table row: files, MB, wall time,
// MB/s, files/s, CPU seconds (user + system of the whole process over all passes), MB per CPU
// second, and the process's peak RSS (VmHWM). Files that fail to decode count like the others
// (their error is counted, not printed), as a corpus holds some malformed files on purpose.
//
// Modes: "batch" is checkpoint.ReadLayoutFiles on -workers goroutines (GOMAXPROCS when 0);
// "decoder" is one checkpoint.Decoder, file after file; "perfile" is os.Open + ReadLayout per
// file, as a program decoding one file would.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

func main() {
	manifest := flag.String("manifest", "", "MANIFEST.tsv of the corpus (default: paths on stdin)")
	mode := flag.String("mode", "batch", "batch, decoder or perfile")
	workers := flag.Int("workers", 0, "batch workers (0: GOMAXPROCS)")
	passes := flag.Int("passes", 5, "passes over the corpus; the best counts")
	flag.Parse()
	if err := run(*manifest, *mode, *workers, *passes, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "corpusdecode:", err)
		os.Exit(1)
	}
}

func run(manifest, mode string, workers, passes int, stdin io.Reader, stdout io.Writer) error {
	paths, err := corpusPaths(manifest, stdin)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return fmt.Errorf("no files")
	}
	var total int64
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		total += fi.Size()
	}
	pass, err := passFunc(mode, paths, workers)
	if err != nil {
		return err
	}
	cpu0 := cpuTime()
	best := time.Duration(1<<63 - 1)
	failed := 0
	for range max(passes, 1) {
		start := time.Now()
		n, err := pass()
		if err != nil {
			return err
		}
		best = min(best, time.Since(start))
		failed = n
	}
	cpu := (cpuTime() - cpu0).Seconds() / float64(max(passes, 1))
	mb := float64(total) / 1e6
	fmt.Fprintf(stdout, "| %s | %d (%d malformed) | %.1f | %.1f ms | %.0f | %.0f | %.3f s | %.0f | %s |\n",
		mode, len(paths), failed, mb, best.Seconds()*1e3, mb/best.Seconds(), float64(len(paths))/best.Seconds(),
		cpu, mb/cpu, peakRSS())
	return nil
}

// passFunc returns one pass over the files in the given mode; it returns how many failed.
func passFunc(mode string, paths []string, workers int) (func() (int, error), error) {
	ctx := context.Background()
	switch mode {
	case "batch":
		return func() (int, error) {
			failed := 0
			err := checkpoint.ReadLayoutFiles(ctx, paths, workers, func(_ int, _ *checkpoint.Layout, err error) error {
				if err != nil {
					failed++
				}
				return nil
			})
			return failed, err
		}, nil
	case "decoder":
		x := checkpoint.NewDecoder()
		return func() (int, error) {
			failed := 0
			for _, p := range paths {
				if _, err := x.ReadLayoutFile(ctx, p); err != nil {
					failed++
				}
			}
			return failed, nil
		}, nil
	case "perfile":
		return func() (int, error) {
			failed := 0
			for _, p := range paths {
				f, err := os.Open(p)
				if err != nil {
					return 0, err
				}
				if _, err := checkpoint.ReadLayout(f); err != nil {
					failed++
				}
				f.Close()
			}
			return failed, nil
		}, nil
	}
	return nil, fmt.Errorf("unknown mode %q: want batch, decoder or perfile", mode)
}

// corpusPaths reads the metadata rows of a MANIFEST.tsv, or paths on stdin.
func corpusPaths(manifest string, stdin io.Reader) ([]string, error) {
	r, dir := stdin, ""
	if manifest != "" {
		f, err := os.Open(manifest)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r, dir = f, filepath.Dir(manifest)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var out []string
	pathCol, kindCol := 0, -1
	for first := true; sc.Scan(); first = false {
		line := sc.Text()
		if manifest == "" {
			if line != "" {
				out = append(out, line)
			}
			continue
		}
		cols := strings.Split(line, "\t")
		if first {
			for i, c := range cols {
				switch c {
				case "local_path":
					pathCol = i
				case "kind":
					kindCol = i
				}
			}
			if kindCol < 0 {
				return nil, fmt.Errorf("%s: no kind column", manifest)
			}
			continue
		}
		if len(cols) > max(pathCol, kindCol) && cols[kindCol] == "metadata" {
			out = append(out, filepath.Join(dir, cols[pathCol]))
		}
	}
	return out, sc.Err()
}

// cpuTime is the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is VmHWM from /proc/self/status ("n/a" where there is none).
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "n/a"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb); err == nil {
				return fmt.Sprintf("%.1f MiB", float64(kb)/1024)
			}
		}
	}
	return "n/a"
}
