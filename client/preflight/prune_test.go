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

// TestSuggestedPruneRuns: the prune command a trend, diff or check finding suggests runs as printed
// (checkpoint argument, --out, quoting), on a copy of the series in a folder with a space.
func TestSuggestedPruneRuns(t *testing.T) {
	series := filepath.Join(t.TempDir(), "job checkpoints")
	if err := os.CopyFS(series, os.DirFS("../../testdata/kafka-orphan-union-series")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"trend", series},
		{"diff", filepath.Join(series, "savepoint-5f43eb-78d476014ffe"), filepath.Join(series, "savepoint-5f43eb-f33770fc864f")},
		{"check", filepath.Join(series, "savepoint-5f43eb-f33770fc864f"), "-p", "2"}, // PF130
	} {
		_, stdout, stderr := runCLI(t, args...)
		_, cmdLine, ok := strings.Cut(stdout, "`preflight prune ")
		cmdLine, _, _ = strings.Cut("preflight prune "+cmdLine, "`")
		cmdLine = strings.ReplaceAll(cmdLine, "CHECKPOINT", shellQuoted(filepath.Join(series, "savepoint-5f43eb-f33770fc864f"))) // PF130's placeholder
		words := shellWords(cmdLine)
		if !ok || len(words) < 2 || words[0] != "preflight" {
			t.Fatalf("%s: no prune command suggested:\n%s%s", args[0], stdout, stderr)
		}
		code, out, errOut := runCLI(t, words[1:]...)
		if code != exitAllow {
			t.Fatalf("%s suggested %q: exit %d\n%s%s", args[0], cmdLine, code, out, errOut)
		}
		if err := os.RemoveAll(words[len(words)-1]); err != nil { // the --out folder, for the next verb
			t.Fatal(err)
		}
	}
}

// shellWords splits a command line the way a POSIX shell does for plain words and single quotes.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, c := range s {
		switch {
		case c == '\'':
			quoted, inWord = !quoted, true
		case c == ' ' && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
			}
			inWord = false
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

func shellQuoted(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
