package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/scenarios"
)

func TestTrendCommand(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", scenarios.SeriesDir)
	series := scenarios.KafkaOrphanUnionSeries()
	malformed := filepath.Join(t.TempDir(), "_metadata")
	if err := os.WriteFile(malformed, []byte("I`g-\x00\x00\x00\x05\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{"folder", []string{"trend", dir}, exitAllow, "exceeded after about"},
		{"list", []string{"trend", filepath.Join(dir, series[0].Folder), filepath.Join(dir, series[1].Folder)}, exitAllow, "1443"},
		{"json", []string{"trend", dir, "-o", "json"}, exitAllow, `"steps_to_frame"`},
		{"fail on warning", []string{"trend", dir, "--fail-on", "warning"}, exitDeny, "LC301"},
		{"empty folder", []string{"trend", t.TempDir()}, exitUsage, "no complete"},
		{"missing checkpoint in a list", []string{"trend", filepath.Join(dir, series[0].Folder), filepath.Join(dir, "nope")}, exitUsage, "nope: no such file"},
		{"malformed checkpoint in a list", []string{"trend", filepath.Join(dir, series[0].Folder), malformed}, exitUsage, malformed + ": malformed _metadata at byte 8"},
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
