package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPruneCommand(t *testing.T) {
	src := "../../testdata/kafka-orphan-union"
	nonEmpty := t.TempDir()
	if err := os.WriteFile(filepath.Join(nonEmpty, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "pruned")
	base := []string{"prune", src, "--operator", "kafka-source", "--state", "topic-partition-offset-states"}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     string // in stdout (code 0) or stderr
	}{
		{"out is source", append(base, "--out", src), exitUsage, "never writes in place"},
		{"out not empty", append(base, "--out", nonEmpty), exitUsage, "not empty"},
		{"no operator", []string{"prune", src, "--out", out}, exitUsage, "--operator is required"},
		{"dry run", append(base, "--out", out, "--dry-run"), exitAllow, "dry run, would write"},
		{"prune", append(base, "--out", out), exitAllow, "ALLOW_WITH_WARNINGS [PF130] → ALLOW []"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.wantCode, stderr)
			}
			if got := stdout + stderr; !strings.Contains(got, tt.want) {
				t.Fatalf("output lacks %q:\n%s", tt.want, got)
			}
			if tt.name == "dry run" {
				if _, err := os.Stat(out); err == nil {
					t.Fatal("dry run wrote the output folder")
				}
			}
		})
	}
	code, stdout, stderr := runCLI(t, append(base, "--out", filepath.Join(t.TempDir(), "j"), "-o", "json")...)
	var s struct {
		Verified      bool     `json:"verified"`
		FindingsAfter []string `json:"findings_after"`
		SizeAfter     int64    `json:"size_after"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &s) != nil || !s.Verified || s.SizeAfter == 0 {
		t.Fatalf("json: exit %d, %+v, stderr %s", code, s, stderr)
	}
}
