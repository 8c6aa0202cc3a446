package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/scenarios"
)

// TestValidationExitCodes: values outside Flink's bounds are usage errors (exit 2) naming the
// bound, parsed at full width (no wrap-around to a small parallelism), the Flink version must
// parse, and a file Flink could not have written is refused with its byte offset.
func TestValidationExitCodes(t *testing.T) {
	compact := "../../testdata/compact-sink/_metadata"
	orig, err := os.ReadFile(compact)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	trailing := write("trailing", append(bytes.Clone(orig), 0xde, 0xad))
	// compact-sink is format 5: magic, version, checkpoint ID, master states, operator count,
	// then the first operator's name and uid, its ID, parallelism and max parallelism.
	hugeMaxP := bytes.Clone(orig)
	nameLen := int(binary.BigEndian.Uint16(hugeMaxP[24:]))
	uidAt := 24 + 2 + nameLen
	maxPAt := uidAt + 2 + int(binary.BigEndian.Uint16(hugeMaxP[uidAt:])) + 16 + 4
	binary.BigEndian.PutUint32(hugeMaxP[maxPAt:], 40000)
	huge := write("huge-max-parallelism", hugeMaxP)

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"parallelism wraps to 3 in int32", []string{"check", compact, "-p", "4294967299"}, exitUsage, "outside 1..32768"},
		{"parallelism MaxInt32", []string{"check", compact, "-p", "2147483647"}, exitUsage, "outside 1..32768"},
		{"parallelism one above", []string{"check", compact, "-p", "32769"}, exitUsage, "outside 1..32768"},
		{"parallelism negative", []string{"check", compact, "-p", "-1"}, exitUsage, "outside 1..32768"},
		{"parallelism beyond int64", []string{"check", compact, "-p", "99999999999999999999"}, exitUsage, "out of range"},
		{"set wraps to 3 in int32", []string{"check", compact, "--set", "compact-operator=4294967299"}, exitUsage, "outside 1..32768"},
		{"set zero", []string{"check", compact, "--set", "compact-operator=0"}, exitUsage, "outside 1..32768"},
		{"set beyond int64", []string{"check", compact, "--set", "compact-operator=99999999999999999999"}, exitUsage, "far outside 1..32768"},
		{"max parallelism above", []string{"check", compact, "--max-parallelism", "compact-operator=32769"}, exitUsage, "outside 1..32768"},
		{"max parallelism wraps", []string{"check", compact, "--max-parallelism", "compact-operator=4294967424"}, exitUsage, "outside 1..32768"},
		{"flink version abc", []string{"check", compact, "--flink-version", "abc"}, exitUsage, "not a Flink version"},
		{"flink version without minor", []string{"check", compact, "--flink-version", "1"}, exitUsage, "not a Flink version"},
		{"negative timeout", []string{"check", compact, "--timeout", "-1s"}, exitUsage, "must not be negative"},
		{"trailing bytes", []string{"check", trailing}, exitUsage, "malformed _metadata at byte " + strconv.Itoa(len(orig))},
		{"trailing bytes, inspect", []string{"inspect", trailing}, exitUsage, "after the end"},
		{"stored max parallelism above the bound", []string{"check", huge}, exitUsage, "max parallelism outside 1..32768"},
		{"the bound itself", []string{"check", compact, "-p", "32768"}, exitDeny, ""}, // valid; PF110 denies it
		{"future Flink version", []string{"check", compact, "--flink-version", "3.4.0"}, exitAllow, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != tt.wantCode || !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("exit %d, stderr %q; want exit %d with %q", code, stderr, tt.wantCode, tt.wantStderr)
			}
			if tt.name == "future Flink version" && !strings.Contains(stdout, "PF116") {
				t.Errorf("no PF116 finding for Flink 3.4.0:\n%s", stdout)
			}
		})
	}
}

// TestTimeout: --timeout stops a long check (200k state names in one subtask) soon after the
// deadline, with exit code 3 and a message saying so.
func TestTimeout(t *testing.T) {
	p := filepath.Join(t.TempDir(), "_metadata")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := scenarios.WriteManyStateNames(f, 200_000); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, _, stderr := runCLI(t, "check", p, "-p", "3", "--timeout", "300ms")
	if d := time.Since(start); d > 300*time.Millisecond+3*time.Second {
		t.Errorf("answered %v after the start, with --timeout 300ms", d)
	}
	if code != exitInternal || !strings.Contains(stderr, "deadline exceeded") {
		t.Errorf("exit %d, stderr %q; want exit 3 with deadline exceeded", code, stderr)
	}
}
