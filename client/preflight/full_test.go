package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/scenarios"
)

// TestCheckFull: text and Markdown show the first findings and operators of a long report and
// say what they left out; --full shows everything.
func TestCheckFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "_metadata")
	// One PF170 finding per operator: each is set to another parallelism, so that no two findings
	// have the same cause (findings of one cause on many operators are merged into one).
	spec := scenarios.Synthetic{Operators: 30, Parallelism: 1, Split: 1}
	args := []string{"check", path}
	for i := range spec.Operators {
		args = append(args, "--set", fmt.Sprintf("op-%d=%d", i, i+2))
	}
	if err := scenarios.WriteFile(path, false, func(w io.Writer) error { return scenarios.WriteSynthetic(w, spec) }); err != nil {
		t.Fatal(err)
	}
	for _, output := range []string{"text", "markdown"} {
		t.Run(output, func(t *testing.T) {
			code, out, stderr := runCLI(t, append(args, "-o", output)...)
			if code != exitAllow {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for _, want := range []string{"… and 20 more findings (20 INFO): --full shows them", "… and 10 more operators: --full shows them"} {
				if !strings.Contains(out, want) {
					t.Errorf("lacks %q:\n%s", want, out)
				}
			}
			code, full, stderr := runCLI(t, append(args, "-o", output, "--full")...)
			if code != exitAllow {
				t.Fatalf("--full: exit %d: %s", code, stderr)
			}
			if strings.Contains(full, "--full shows") || strings.Count(full, "PF170") < 30 || !strings.Contains(full, "op-29") {
				t.Errorf("--full leaves something out:\n%s", full)
			}
		})
	}
}

// TestChartsOfMergedFinding: a finding standing for many operators (operator_ids) charts each of
// them, as the findings it replaces did, up to the report's most charts.
func TestChartsOfMergedFinding(t *testing.T) {
	path := filepath.Join(t.TempDir(), "_metadata")
	spec := scenarios.Synthetic{Operators: 8, Parallelism: 4, MaxParallelism: 128, Split: 1}
	if err := scenarios.WriteFile(path, false, func(w io.Writer) error { return scenarios.WriteSynthetic(w, spec) }); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "check", path, "-p", "200") // over the max parallelism: PF110 on all 8
	if code != exitDeny || !strings.Contains(out, "8 operators alike") {
		t.Fatalf("exit %d, want one PF110 for 8 operators: %s\n%s", code, stderr, out)
	}
	if n := strings.Count(out, "STATE PER SUBTASK: "); n != 8 {
		t.Errorf("%d charts, want one per operator the finding names (8)", n)
	}
}
