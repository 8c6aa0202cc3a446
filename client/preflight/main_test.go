package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// fixtures is the spec's hand-checked copy of real Flink files, beside the repository.
const fixtures = "../../../shared/spec/fixtures/flink-metadata"

func fixture(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(fixtures, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s not available (../shared is absent in a plain clone): %v", p, err)
	}
	return p
}

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("I`g-\x00\x00\x00\x03\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	emptyDir := t.TempDir()
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"no args", []string{"check"}, exitUsage, "name a CHECKPOINT"},
		{"unknown flag", []string{"check", "x", "--nope"}, exitUsage, "unknown flag"},
		{"bad set", []string{"check", "x", "--set", "abc"}, exitUsage, "want KEY=N"},
		{"bad fail-on", []string{"check", "x", "--fail-on", "fatal"}, exitUsage, "want info, warning or error"},
		{"bad output", []string{"check", "x", "-o", "yaml"}, exitUsage, "unknown output format"},
		{"bad frame size", []string{"check", "x", "--frame-size", "big"}, exitUsage, "invalid size"},
		{"bad connector version", []string{"check", "x", "--connector-version", "iceberg"}, exitUsage, "want NAME=VERSION"},
		{"bad restore mode", []string{"check", "x", "--restore-mode", "steal"}, exitUsage, "want claim, no-claim or legacy"},
		{"bad snapshot time", []string{"check", "x", "--snapshot-time", "yesterday"}, exitUsage, "want an RFC 3339 time"},
		{"bad transaction timeout", []string{"check", "x", "--kafka-transaction-timeout", "1 hour"}, exitUsage, "invalid argument"},
		{"negative transaction timeout", []string{"check", "x", "--kafka-transaction-timeout", "-1m"}, exitUsage, "cannot be negative"},
		{"bad channel mapper", []string{"check", "x", "--input-channel-mapper", "map=zigzag"}, exitUsage, "MAPPER one of first, full, range"},
		{"channel mapper", []string{"check", "../../testdata/compact-sink", "--output-channel-mapper", "compact-operator=round-robin", "--input-channel-mapper", "compact-operator=RANGE"}, exitAllow, ""},
		{"missing file", []string{"check", filepath.Join(dir, "nope")}, exitUsage, "no such file or folder: " + filepath.Join(dir, "nope")},
		{"folder without _metadata", []string{"check", emptyDir}, exitUsage, "without a _metadata file"},
		{"malformed", []string{"check", garbage}, exitUsage, "malformed _metadata at byte"},
		{"unreachable server", []string{"check", garbage, "--server", "127.0.0.1:1", "--insecure"}, exitInternal, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.wantCode, stderr)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.wantStderr)
			}
		})
	}
}

func TestCheckFixture(t *testing.T) {
	path := fixture(t, "v4-kafka-source-native-stop-savepoint.metadata")
	tests := []struct {
		name     string
		args     []string
		wantCode int
		check    func(t *testing.T, r *pb.RescaleReport)
	}{
		{
			name: "scale the kafka source by uid", args: []string{"--set", "kafka-source-operator-uid=5"}, wantCode: exitAllow,
			check: func(t *testing.T, r *pb.RescaleReport) {
				for _, op := range r.GetOperators() {
					if op.GetOperatorId() == "cb16aa5adb311e8ac72482def19accbe" && op.GetNewParallelism() != 5 {
						t.Errorf("kafka source new parallelism %d, want 5", op.GetNewParallelism())
					}
				}
			},
		},
		{
			name: "above max parallelism", args: []string{"--parallelism", "200"}, wantCode: exitDeny,
			check: func(t *testing.T, r *pb.RescaleReport) {
				if r.GetVerdict() != pb.Verdict_VERDICT_DENY {
					t.Errorf("verdict %v, want DENY", r.GetVerdict())
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := runCLI(t, append([]string{"check", path, "-o", "json"}, tt.args...)...)
			if code != tt.wantCode {
				t.Fatalf("exit code %d, want %d; stderr %s", code, tt.wantCode, stderr)
			}
			var r pb.RescaleReport
			if err := protojson.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("output is not a RescaleReport: %v\n%s", err, out)
			}
			tt.check(t, &r)
		})
	}
}

func TestFormats(t *testing.T) {
	path := fixture(t, "v6-flink2.2-broadcast-hashmap-savepoint.metadata")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"check", path, "-p", "2"}, "VERDICT:"},
		{[]string{"check", path, "-p", "2", "-o", "markdown"}, "## Flink Preflight:"},
		{[]string{"inspect", path}, "OPERATOR"},
		{[]string{"inspect", path, "-o", "markdown"}, "| Operator |"},
		{[]string{"inspect", path, "-o", "json"}, `"formatVersion": 6`},
	} {
		t.Run(strings.Join(tt.args[2:], " "), func(t *testing.T) {
			code, out, stderr := runCLI(t, tt.args...)
			if code > exitDeny {
				t.Fatalf("exit code %d; stderr %s", code, stderr)
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, out)
			}
		})
	}
}

// TestSizeFlags: size flags take Flink's forms and show their defaults as sizes, not strings.
func TestSizeFlags(t *testing.T) {
	code, stdout, _ := runCLI(t, "check", "--help")
	for _, want := range []string{"--frame-size size", "(default 10MiB)", "(default 20KiB)"} {
		if code != exitAllow || !strings.Contains(stdout, want) {
			t.Errorf("check --help lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, `(default "`) && strings.Contains(stdout, `MiB"`) {
		t.Errorf("a size default printed as a string:\n%s", stdout)
	}
	for _, v := range []string{"10485760", "10MiB", "10mb", "20kb", "1g"} {
		if code, _, stderr := runCLI(t, "check", "../../testdata/compact-sink", "--frame-size", v); code != exitAllow {
			t.Errorf("--frame-size %s: exit %d: %s", v, code, stderr)
		}
	}
}

// TestFlinkFileURIs: Flink prints local savepoint and checkpoint pointers as file:/path; every
// verb that reads a local checkpoint takes that form as it takes file:///path and /path.
func TestFlinkFileURIs(t *testing.T) {
	abs, err := filepath.Abs("../../testdata/compact-sink")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"check", "file:" + abs + "/_metadata", "--set", "compact-operator=8"}, exitDeny},
		{[]string{"check", "file:" + abs, "--set", "compact-operator=4"}, exitAllow},
		{[]string{"decide", "file:" + abs, "--set", "compact-operator=8"}, exitDeny},
		{[]string{"inspect", "file:" + abs + "/_metadata"}, exitAllow},
		{[]string{"inspect", "file:" + abs, "file://" + abs + "/_metadata"}, exitAllow},
		{[]string{"diff", "file:" + abs, abs}, exitAllow},
	} {
		if code, _, stderr := runCLI(t, tc.args...); code != tc.want {
			t.Errorf("%v: exit %d, want %d; stderr %s", tc.args, code, tc.want, stderr)
		}
	}
}
