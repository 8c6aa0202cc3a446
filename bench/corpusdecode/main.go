// Command corpusdecode decodes every _metadata file of a corpus in one process and prints the
// throughput, so that bench/run.sh can compare it with another decoder on the same files and
// the same machine. The files come from a MANIFEST.tsv (rows of kind "metadata", paths relative
// to the manifest's folder) or from a list of paths on stdin.
//
// It runs -passes passes and prints the best as one Markdown table row: files, MB, wall time,
// MB/s, files/s, CPU seconds (user + system of the whole process over all passes), MB per CPU
// second, and the process's peak RSS (VmHWM). Files that fail to decode count like the others
// (their error is counted, not printed), as a corpus holds some malformed files on purpose.
// -failed writes the paths that failed, one a line, and -stats appends the row's figures as
// tab-separated values, so that a script can compare two decoders on the files both decode.
//
// Modes (ours.go): "batch" is checkpoint.ReadLayoutFiles on -workers goroutines (GOMAXPROCS
// when 0); "decoder" is one checkpoint.Decoder, file after file; "perfile" is os.Open +
// ReadLayout per file, as a program decoding one file would. Mode "read" (this file) decodes
// nothing: -workers goroutines open, read and close every file with one system call each,
// which is the floor under any decoder's wall time on these files. This file imports only the
// standard library: bench/run.sh builds it next to another decoder's passFunc (a generated
// file outside the repository) to measure that decoder with the same harness.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A pass decodes every file once and calls fail(i) for each paths[i] that did not decode.
type pass func(fail func(i int)) error

func main() {
	manifest := flag.String("manifest", "", "MANIFEST.tsv of the corpus (default: paths on stdin)")
	mode := flag.String("mode", "batch", "decoding mode: "+modes+", or read (no decoding: the floor)")
	workers := flag.Int("workers", 0, "batch workers (0: GOMAXPROCS)")
	passes := flag.Int("passes", 5, "passes over the corpus; the best counts")
	failedOut := flag.String("failed", "", "write the paths that failed to this file")
	statsOut := flag.String("stats", "", "append mode, files, failed, bytes, best wall s, CPU s per pass, peak RSS KiB (tab-separated) to this file")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "corpusdecode:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*manifest, *mode, *workers, *passes, *failedOut, *statsOut, os.Stdin, os.Stdout); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "corpusdecode:", err)
		os.Exit(1)
	}
}

func run(manifest, mode string, workers, passes int, failedOut, statsOut string, stdin io.Reader, stdout io.Writer) error {
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
	var decode pass
	if mode == "read" {
		decode = readPass(paths, workers)
	} else if decode, err = passFunc(mode, paths, workers); err != nil {
		return err
	}
	failed := make([]bool, len(paths))
	cpu0 := cpuTime()
	best := time.Duration(1<<63 - 1)
	for range max(passes, 1) {
		clear(failed)
		start := time.Now()
		if err := decode(func(i int) { failed[i] = true }); err != nil {
			return err
		}
		best = min(best, time.Since(start))
	}
	cpu := (cpuTime() - cpu0).Seconds() / float64(max(passes, 1))
	var bad []string
	for i, f := range failed {
		if f {
			bad = append(bad, paths[i])
		}
	}
	if failedOut != "" {
		if err := os.WriteFile(failedOut, []byte(strings.Join(append(bad, ""), "\n")), 0o644); err != nil {
			return err
		}
	}
	rssKiB := peakRSSKiB()
	rss := "n/a"
	if rssKiB > 0 {
		rss = fmt.Sprintf("%.1f MiB", float64(rssKiB)/1024)
	}
	mb := float64(total) / 1e6
	fmt.Fprintf(stdout, "| %s | %d (%d failed) | %.1f | %.1f ms | %.0f | %.0f | %.3f s | %.0f | %s |\n",
		mode, len(paths), len(bad), mb, best.Seconds()*1e3, mb/best.Seconds(), float64(len(paths))/best.Seconds(),
		cpu, mb/cpu, rss)
	if statsOut != "" {
		f, err := os.OpenFile(statsOut, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		fmt.Fprintf(f, "%s\t%d\t%d\t%d\t%.6f\t%.6f\t%d\n", mode, len(paths), len(bad), total, best.Seconds(), cpu, rssKiB)
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// readPass reads every file and decodes nothing, on workers goroutines (GOMAXPROCS when 0):
// open, read into the worker's 4 MiB buffer until a short read, close, with no fstat and no
// *os.File, the least a decoder must do per file.
func readPass(paths []string, workers int) pass {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	bufs := make([][]byte, workers)
	for w := range bufs {
		bufs[w] = make([]byte, 4<<20)
	}
	return func(fail func(int)) error {
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make([]error, workers)
		for w := range workers {
			wg.Go(func() {
				for i := int(next.Add(1) - 1); i < len(paths); i = int(next.Add(1) - 1) {
					fd, err := syscall.Open(paths[i], syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
					if err != nil {
						errs[w] = &os.PathError{Op: "open", Path: paths[i], Err: err}
						return
					}
					for {
						n, err := syscall.Read(fd, bufs[w])
						if err != nil && err != syscall.EINTR {
							fail(i)
							break
						}
						if n < len(bufs[w]) && err == nil {
							break
						}
					}
					syscall.Close(fd)
				}
			})
		}
		wg.Wait()
		return errors.Join(errs...)
	}
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

// peakRSSKiB is VmHWM from /proc/self/status (0 where there is none).
func peakRSSKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb); err == nil {
				return kb
			}
		}
	}
	return 0
}
