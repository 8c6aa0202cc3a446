package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/flinkpreflight/preflight/internal/scenarios"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// inspectTree writes generated checkpoints under a temp folder: a job folder with chk-2, chk-10
// (out of lexical order) and a nested savepoint, a file that is not _metadata, a symbolic link
// to a folder with a _metadata outside the tree (not followed), and a malformed file elsewhere.
func inspectTree(t *testing.T) (job, outside, bad string) {
	t.Helper()
	root := t.TempDir()
	compact, err := scenarios.Encode(scenarios.All()[0])
	if err != nil {
		t.Fatal(err)
	}
	write := func(path string, b []byte) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	job = filepath.Join(root, "job")
	for _, p := range []string{"chk-10/_metadata", "chk-2/_metadata", "savepoints/savepoint-1a/_metadata"} {
		write(filepath.Join(job, p), compact)
	}
	write(filepath.Join(job, "chk-2", "state-file"), []byte("not a checkpoint"))
	outside = filepath.Dir(write(filepath.Join(root, "elsewhere", "_metadata"), compact))
	if err := os.Symlink(outside, filepath.Join(job, "linked")); err != nil {
		t.Fatal(err)
	}
	bad = write(filepath.Join(root, "bad", "_metadata"), []byte("I`g-\x00\x00\x00\x05\x00\x00"))
	return job, outside, bad
}

func TestInspectMany(t *testing.T) {
	job, outside, bad := inspectTree(t)
	chk2, chk10, sp := filepath.Join(job, "chk-2", "_metadata"), filepath.Join(job, "chk-10", "_metadata"), filepath.Join(job, "savepoints", "savepoint-1a", "_metadata")
	missing := filepath.Join(outside, "nope")
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantOrder  []string // report headers in stdout, in this order
		wantStderr []string
	}{
		{"folder walked in natural order, links not followed", []string{job}, exitAllow, []string{chk2, chk10, sp}, nil},
		{"several paths in argument order", []string{outside, chk10}, exitAllow, []string{outside, chk10}, nil},
		{"folder and file", []string{filepath.Join(job, "chk-10"), job}, exitAllow, []string{filepath.Join(job, "chk-10"), chk2, chk10, sp}, nil},
		{"markdown", []string{job, "-o", "markdown"}, exitAllow, []string{chk2, chk10, sp}, nil},
		{"malformed after the good ones", []string{bad, outside}, exitUsage, []string{outside},
			[]string{bad + ": malformed _metadata at byte 8 (checkpointId)", "1 of 2 checkpoints could not be inspected"}},
		{"missing path", []string{outside, missing}, exitUsage, []string{outside}, []string{missing, "no such file"}},
		{"folder without any _metadata", []string{outside, t.TempDir()}, exitUsage, nil, []string{"no _metadata file in"}},
		{"remote with several", []string{outside, chk2, "--server", "127.0.0.1:1", "--insecure"}, exitUsage, nil, []string{"--server inspects one CHECKPOINT"}},
		{"URI among several", []string{outside, "s3://b/chk-1"}, exitUsage, nil, []string{"local paths only"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"inspect"}, tt.args...)...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout, stderr)
			}
			// Each report names its file and lists compact-sink's operators once.
			if n := strings.Count(stdout, "partition-committer"); n != len(tt.wantOrder) {
				t.Errorf("%d reports, want %d:\n%s", n, len(tt.wantOrder), stdout)
			}
			pos := 0
			for _, name := range tt.wantOrder {
				i := strings.Index(stdout[pos:], name)
				if i < 0 {
					t.Fatalf("no report for %s after byte %d (want order %q):\n%s", name, pos, tt.wantOrder, stdout)
				}
				pos += i + len(name)
			}
			if len(tt.wantOrder) > 1 && !strings.Contains(stdout, "\n\n") {
				t.Errorf("reports are not separated by a blank line:\n%s", stdout)
			}
			for _, w := range tt.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

func TestInspectManyJSON(t *testing.T) {
	job, _, bad := inspectTree(t)
	for _, tt := range []struct {
		name     string
		args     []string
		wantCode int
		want     int
	}{
		{"folder", []string{job}, exitAllow, 3},
		{"with a malformed file", []string{bad, job}, exitUsage, 3},
		{"only malformed", []string{bad, bad}, exitUsage, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"inspect", "-o", "json"}, tt.args...)...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d: %s", code, tt.wantCode, stderr)
			}
			var items []json.RawMessage
			if err := json.Unmarshal([]byte(stdout), &items); err != nil {
				t.Fatalf("stdout is not one JSON array: %v\n%s", err, stdout)
			}
			if len(items) != tt.want {
				t.Fatalf("%d reports, want %d", len(items), tt.want)
			}
			for _, item := range items {
				var r pb.InspectCheckpointResponse
				if err := protojson.Unmarshal(item, &r); err != nil {
					t.Fatal(err)
				}
				if len(r.GetOperators()) == 0 || !strings.HasSuffix(r.GetCheckpoint().GetSource(), "_metadata") {
					t.Fatalf("report without operators or source: %s", item)
				}
			}
		})
	}
}

// A single CHECKPOINT gives the same shape as several: a JSON array, here of one object.
func TestInspectOneJSON(t *testing.T) {
	_, outside, _ := inspectTree(t)
	code, stdout, stderr := runCLI(t, "inspect", outside, "-o", "json")
	var items []json.RawMessage
	if code != exitAllow || json.Unmarshal([]byte(stdout), &items) != nil || len(items) != 1 {
		t.Fatalf("exit %d, stdout not an array of one object for %s:\n%s%s", code, outside, stdout, stderr)
	}
	var r pb.InspectCheckpointResponse
	if err := protojson.Unmarshal(items[0], &r); err != nil || r.GetCheckpoint().GetSource() != outside {
		t.Fatalf("item %s: %v", items[0], err)
	}
}

func TestNaturalCompare(t *testing.T) {
	in := []string{"chk-10", "chk-9", "chk-009", "a", "chk-2/x", "chk-", "b1", "chk-100", "chk-10a"}
	slices.SortFunc(in, naturalCompare)
	want := []string{"a", "b1", "chk-", "chk-2/x", "chk-9", "chk-009", "chk-10", "chk-10a", "chk-100"}
	if !slices.Equal(in, want) {
		t.Fatalf("got %q, want %q", in, want)
	}
}
