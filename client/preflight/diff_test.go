package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/scenarios"
)

func TestDiffCommand(t *testing.T) {
	series := scenarios.KafkaOrphanUnionSeries()
	dir := filepath.Join("..", "..", "testdata", scenarios.SeriesDir)
	a, b := filepath.Join(dir, series[1].Folder), filepath.Join(dir, series[2].Folder)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{"text", []string{"diff", a, b}, exitAllow, "256 → 1024 (×4.00)"},
		{"markdown", []string{"diff", a, b, "-o", "markdown"}, exitAllow, "| `topic-partition-offset-states` |"},
		{"json", []string{"diff", a, b, "-o", "json"}, exitAllow, `"id": "LC301"`},
		{"fail on warning", []string{"diff", a, b, "--fail-on", "warning"}, exitDeny, "LC301"},
		{"one arg", []string{"diff", a}, exitUsage, "accepts 2 arg"},
		{"missing", []string{"diff", a, filepath.Join(dir, "nope")}, exitUsage, "no such file or folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != tt.wantCode || !strings.Contains(stdout+stderr, tt.want) {
				t.Fatalf("exit %d (want %d), output lacks %q:\n%s%s", code, tt.wantCode, tt.want, stdout, stderr)
			}
		})
	}
}
