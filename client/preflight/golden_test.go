package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// update rewrites the golden files from the current output:
//
//	go test ./client/preflight -run TestGolden -update
//
// then review the diff (git diff client/preflight/testdata/golden) like any other change.
var update = flag.Bool("update", false, "rewrite the golden files of TestGolden from the current output")

// goldenCases are the check and inspect runs of every example checkpoint under testdata/ (the
// plans of testdata/README.md, the first being the README's demo) and two decisions, each in
// the three formats.
var goldenCases = []struct {
	name     string
	args     []string // after the verb and the output flag
	wantCode int
}{
	{"check-compact-sink-set-8", []string{"check", "testdata/compact-sink/_metadata", "--set", "compact-operator=8"}, exitDeny},
	{"check-compact-sink-set-2", []string{"check", "testdata/compact-sink/_metadata", "--set", "compact-operator=2"}, exitAllow},
	{"check-compact-sink-coordinator-2", []string{"check", "testdata/compact-sink/_metadata", "--set", "compact-coordinator=2"}, exitDeny},
	{"check-compact-sink-p2", []string{"check", "testdata/compact-sink/_metadata", "-p", "2"}, exitAllow}, // job-wide: the pinned operators stay at 1
	{"check-kafka-orphan-union-p2", []string{"check", "testdata/kafka-orphan-union/_metadata", "-p", "2"}, exitAllow},
	{"check-kafka-orphan-union-frame-1mib", []string{"check", "testdata/kafka-orphan-union/_metadata", "--frame-size", "1MiB"}, exitDeny},
	{"check-max-parallelism-set-200", []string{"check", "testdata/max-parallelism/_metadata", "--set", "click-window=200"}, exitDeny},
	{"check-max-parallelism-set-128", []string{"check", "testdata/max-parallelism/_metadata", "--set", "click-window=128"}, exitAllow},
	{"check-kafka-orphan-union-series-2478-p8", []string{"check", "testdata/kafka-orphan-union-series/savepoint-5f43eb-f33770fc864f", "-p", "8"}, exitAllow},
	{"check-custom-operator-set-8", []string{"check", "testdata/custom-operator/_metadata", "--set", "pending-commit-writer=8"}, exitAllow}, // unknown operator: INFO PF170
	{"check-custom-operator-set-8-job-jar", []string{"check", "testdata/custom-operator/_metadata", "--set", "pending-commit-writer=8", "--job-jar", "testdata/custom-operator/job.jar"}, exitDeny},
	{"decide-custom-operator-set-8-job-jar", []string{"decide", "testdata/custom-operator", "--set", "pending-commit-writer=8", "--job-jar", "testdata/custom-operator/job.jar"}, exitDeny},
	{"analyze-custom-operator", []string{"analyze", "testdata/custom-operator/job.jar"}, exitAllow},
	{"decide-compact-sink-set-8", []string{"decide", "testdata/compact-sink", "--set", "compact-operator=8"}, exitDeny},
	{"decide-max-parallelism-set-200", []string{"decide", "testdata/max-parallelism", "--set", "click-window=200", "--verify-files=false"}, exitAdjust}, // testdata holds no state files,
	{"inspect-compact-sink", []string{"inspect", "testdata/compact-sink/_metadata"}, exitAllow},
	{"inspect-kafka-orphan-union", []string{"inspect", "testdata/kafka-orphan-union/_metadata"}, exitAllow},
	{"inspect-max-parallelism", []string{"inspect", "testdata/max-parallelism/_metadata"}, exitAllow},
	{"inspect-kafka-orphan-union-series-2478", []string{"inspect", "testdata/kafka-orphan-union-series/savepoint-5f43eb-f33770fc864f"}, exitAllow},
	{"inspect-kafka-orphan-union-series-folder", []string{"inspect", "testdata/kafka-orphan-union-series"}, exitAllow}, // five files, one legend
}

// TestGolden compares the CLI's output byte for byte with testdata/golden/NAME.{txt,md,json}.
// It runs in the repository root so that paths read as in the README. The outputs carry no
// timestamps, durations or absolute paths, so nothing needs normalising; -update rewrites the
// files (for example after a finding's wording changed).
func TestGolden(t *testing.T) {
	golden, err := filepath.Abs(filepath.Join("testdata", "golden"))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.MkdirAll(golden, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(filepath.Join("..", ".."))
	formats := []struct{ flag, ext string }{{"text", "txt"}, {"markdown", "md"}, {"json", "json"}}
	seen := map[string]bool{}
	for _, c := range goldenCases {
		for _, f := range formats {
			name := c.name + "." + f.ext
			seen[name] = true
			t.Run(name, func(t *testing.T) {
				args := append([]string{c.args[0], "-o", f.flag}, c.args[1:]...)
				code, stdout, stderr := runCLI(t, args...)
				if code != c.wantCode || stderr != "" {
					t.Fatalf("preflight %s: exit %d, stderr %q; want exit %d and no stderr", strings.Join(args, " "), code, stderr, c.wantCode)
				}
				path := filepath.Join(golden, name)
				if *update {
					if err := os.WriteFile(path, []byte(stdout), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (create the golden files with: go test ./client/preflight -run TestGolden -update)", err)
				}
				if !bytes.Equal([]byte(stdout), want) {
					t.Errorf("preflight %s differs from %s (-want +got):\n%s\nIf the change is intended: go test ./client/preflight -run TestGolden -update",
						strings.Join(args, " "), path, lineDiff(string(want), stdout))
				}
			})
		}
	}
	// A golden file no case writes is stale: a renamed case would otherwise leave it behind.
	entries, err := os.ReadDir(golden)
	if err != nil && !*update {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !seen[e.Name()] {
			if *update {
				os.Remove(filepath.Join(golden, e.Name()))
				continue
			}
			t.Errorf("%s: no golden case writes it (remove it, or run -update)", e.Name())
		}
	}
}

// lineDiff lists the lines that differ between want and got, with their line numbers: enough
// to see what changed without a diff library.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 20; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			shown++
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n- " + wl + "\n+ " + gl + "\n")
		}
	}
	return b.String()
}
