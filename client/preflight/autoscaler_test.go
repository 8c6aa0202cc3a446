package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/flinkpreflight/preflight/internal/flinkrest/flinkresttest"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

const (
	compactOpVertex   = "0d9ffb4f280d028d86dadba01ac205d7"
	sourceChainVertex = "45b0254a46cabbc3efeea5d2e170ea5b"
)

func compactSinkDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../../testdata/compact-sink")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// findingsOf reduces a JSON report to what must agree: verdict and findings (with their
// messages when exact).
func findingsOf(t *testing.T, stdout string, exact bool) (pb.Verdict, []string) {
	t.Helper()
	var rep pb.RescaleReport
	if err := protojson.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	var fs []string
	for _, f := range rep.GetFindings() {
		s := f.GetRuleId() + " " + f.GetSeverity().String() + " " + f.GetVertexId() + " " + f.GetOperatorId()
		if exact {
			s += " " + f.GetMessage()
		}
		fs = append(fs, s)
	}
	return rep.GetVerdict(), fs
}

// The done-when: checking a running job through its REST API gives the same verdict and
// findings as checking its checkpoint directly, and names the checkpoint it chose. The REST path
// takes the restoring cluster's version from GET /config; with the same --flink-version on both
// sides the reports agree to the byte, and without it they agree in verdict and rule IDs (the
// messages then name the version instead of assuming it).
func TestCheckFlinkRESTSameAsCheckpoint(t *testing.T) {
	dir := compactSinkDir(t)
	code, plain, _ := runCLI(t, "check", dir, "--set", "compact-operator=8", "-o", "json")
	if code != exitDeny {
		t.Fatalf("direct check exit %d", code)
	}
	_, pinned, _ := runCLI(t, "check", dir, "--set", "compact-operator=8", "--flink-version", "2.1.0", "-o", "json")
	fake := flinkresttest.Start(t, flinkresttest.Job{Version: "2.1", CheckpointPath: "file:" + dir})
	rest := []string{"check", "--flink-rest", fake.URL, "--job", flinkresttest.DefaultJobID, "--set", compactOpVertex + "=8", "-o", "json"}
	for _, tt := range []struct {
		name  string
		extra []string
		want  string
		exact bool
	}{
		{"cluster version from REST", nil, plain, false},
		{"same --flink-version", []string{"--flink-version", "2.1.0"}, pinned, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append(rest, tt.extra...)...)
			if code != exitDeny {
				t.Fatalf("exit %d\n%s", code, errOut)
			}
			wantVerdict, wantFindings := findingsOf(t, tt.want, tt.exact)
			verdict, fs := findingsOf(t, out, tt.exact)
			if verdict != wantVerdict || strings.Join(fs, "\n") != strings.Join(wantFindings, "\n") {
				t.Fatalf("REST check differs:\n%s\nwant\n%s", strings.Join(fs, "\n"), strings.Join(wantFindings, "\n"))
			}
			if !strings.Contains(errOut, "chose "+dir) || !strings.Contains(errOut, "checkpoint 1742") || !strings.Contains(errOut, "1m35s ago") {
				t.Errorf("stderr does not name the chosen checkpoint: %s", errOut)
			}
			if !strings.Contains(out, "FLINK-31689") || !strings.Contains(out, `"checkpointChoice"`) {
				t.Errorf("no FLINK-31689 reference or checkpoint choice")
			}
		})
	}
}

// Flink 1.x clusters cannot restore the format-5 (Flink 2.x) compact-sink: through their REST API
// the check also reports PF115, besides the FLINK-31689 denial.
func TestCheckFlinkREST1x(t *testing.T) {
	dir := compactSinkDir(t)
	for _, v := range []string{"1.15", "1.20"} {
		fake := flinkresttest.Start(t, flinkresttest.Job{Version: v, CheckpointPath: "file:" + dir})
		code, out, errOut := runCLI(t, "check", "--flink-rest", fake.URL, "--job", flinkresttest.DefaultJobID, "--set", compactOpVertex+"=8", "-o", "json")
		_, fs := findingsOf(t, out, false)
		if code != exitDeny || !strings.HasPrefix(strings.Join(fs, ","), "PF101") || !strings.Contains(strings.Join(fs, ","), "PF115") {
			t.Errorf("%s: exit %d findings %v\n%s", v, code, fs, errOut)
		}
	}
}

func TestCheckFlinkRESTErrors(t *testing.T) {
	dir := compactSinkDir(t)
	unreachable := flinkresttest.Start(t, flinkresttest.Job{})
	unreachableURL := unreachable.URL
	unreachable.Close()
	tests := []struct {
		name string
		job  flinkresttest.Job
		url  string
		id   string
		code int
		msg  string
	}{
		{"unknown job", flinkresttest.Job{CheckpointPath: dir}, "", "ffffffffffffffffffffffffffffffff", exitUsage, "not found"},
		{"no completed checkpoint", flinkresttest.Job{NoCheckpoint: true}, "", "", exitUsage, "no completed checkpoint"},
		{"unreachable", flinkresttest.Job{}, unreachableURL, "", exitInternal, "unreachable"},
		{"hdfs path", flinkresttest.Job{CheckpointPath: "hdfs://nn:8020/ck/chk-1742"}, "", "", exitUsage, "not hdfs://"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := tt.url
			if url == "" {
				url = flinkresttest.Start(t, tt.job).URL
			}
			id := tt.id
			if id == "" {
				id = flinkresttest.DefaultJobID
			}
			code, _, errOut := runCLI(t, "check", "--flink-rest", url, "--job", id, "--set", compactOpVertex+"=8")
			if code != tt.code || !strings.Contains(errOut, tt.msg) {
				t.Fatalf("exit %d, want %d; stderr %s", code, tt.code, errOut)
			}
		})
	}
}

func TestCheckLatest(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(compactSinkDir(t), "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for i, name := range []string{"chk-1741", "chk-1742"} {
		p := filepath.Join(root, name, "_metadata")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		ts := time.Now().Add(time.Duration(i-2) * time.Minute)
		os.Chtimes(p, ts, ts)
	}
	os.MkdirAll(filepath.Join(root, "chk-1743"), 0o755) // in progress
	code, out, errOut := runCLI(t, "check", root, "--latest", "--set", "compact-operator=8")
	if code != exitDeny || !strings.Contains(errOut, "chk-1742") || !strings.Contains(errOut, "skipped incomplete chk-1743") || !strings.Contains(out, "chk-1742") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
}

func TestDecideCLI(t *testing.T) {
	dir := compactSinkDir(t)
	fake := flinkresttest.Start(t, flinkresttest.Job{Version: "2.1", CheckpointPath: "file:" + dir})
	rest := []string{"--flink-rest", fake.URL, "--job", flinkresttest.DefaultJobID}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"veto the compact operator", append([]string{"decide", "--set", compactOpVertex + "=8"}, rest...), exitDeny, "PF101"},
		{"approve the source chain", append([]string{"decide", "--set", sourceChainVertex + "=8"}, rest...), exitAllow, "APPROVE"},
		{"adjust to a divisor", append([]string{"decide", "--set", sourceChainVertex + "=6", "--align-to-key-groups"}, rest...), exitAdjust, "ADJUST"},
		{"checkpoint without the job", []string{"decide", dir, "--set", "compact-operator=8"}, exitDeny, "VETO"},
		{"no proposal", append([]string{"decide"}, rest...), exitUsage, ""},
		{"fail closed", []string{"decide", "--flink-rest", fake.URL, "--job", "ffffffffffffffffffffffffffffffff", "--set", compactOpVertex + "=8"}, exitDeny, "NOT_FOUND"},
		{"fail open", []string{"decide", "--flink-rest", fake.URL, "--job", "ffffffffffffffffffffffffffffffff", "--set", compactOpVertex + "=8", "--fail-open"}, exitAllow, "NOT_FOUND"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(out+errOut, tt.want) {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, tt.code, out, errOut)
			}
		})
	}
}

// decide and check --flink-rest answer the same in-process and through a server (which calls the
// Flink REST API itself, inside its allowlist).
func TestDecideEmbeddedAndRemoteAgree(t *testing.T) {
	dir := compactSinkDir(t)
	fake := flinkresttest.Start(t, flinkresttest.Job{Version: "2.1", CheckpointPath: "file:" + dir})
	addr := startServer(t, dir, fake.URL)
	rest := []string{"--flink-rest", fake.URL, "--job", flinkresttest.DefaultJobID, "-o", "json"}
	for _, args := range [][]string{
		append([]string{"decide", "--set", compactOpVertex + "=8", "--set", sourceChainVertex + "=6", "--align-to-key-groups"}, rest...),
		append([]string{"decide", "--set", sourceChainVertex + "=8"}, rest...),
		append([]string{"check", "--set", compactOpVertex + "=8"}, rest...),
	} {
		embeddedCode, embedded, stderr := runCLI(t, args...)
		remoteCode, remote, stderr2 := runCLI(t, append(args, "--server", addr, "--insecure")...)
		// The server labels the checkpoint with the URI it opened; the CLI with the path it was given.
		remote = strings.ReplaceAll(remote, "file://"+dir+"/_metadata", dir)
		if embeddedCode != remoteCode || embedded != remote {
			t.Fatalf("%v: embedded %d, remote %d\n%s\n%s\n%s\n%s", args, embeddedCode, remoteCode, embedded, remote, stderr, stderr2)
		}
	}
}
