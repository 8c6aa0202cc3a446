package main

import (
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint/checkpointtest"
)

// TestAmbiguousSetKey: a --set, --max-parallelism or --chain key that names two operators (here
// two operators renamed "Flat Map" in compact-sink) is a usage error, exit 2, listing both with
// their IDs, in-process and from a server (INVALID_ARGUMENT); either ID then works as the key.
func TestAmbiguousSetKey(t *testing.T) {
	m := checkpointtest.Metadata(t, "../../testdata/compact-sink/_metadata")
	var ids []string
	for i := range m.Operators {
		if op := &m.Operators[i]; op.UID == "streaming-writer" || op.UID == "compact-operator" {
			op.Name = "Flat Map"
			ids = append(ids, op.ID.String())
		}
	}
	if len(ids) != 2 {
		t.Fatalf("renamed %d operators, want 2", len(ids))
	}
	path := writeMetadata(t, m)
	for _, tt := range []struct {
		name     string
		args     []string
		wantCode int
		want     []string
	}{
		{"set", []string{"--set", "Flat Map=2"}, exitUsage, append([]string{`"Flat Map": ambiguous: names 2 operators`}, ids...)},
		{"max parallelism", []string{"--max-parallelism", "Flat Map=64"}, exitUsage, append([]string{"ambiguous"}, ids...)},
		{"chain", []string{"--chain", "Source: orders=Flat Map"}, exitUsage, append([]string{"ambiguous"}, ids...)},
		{"decide", []string{"--set", "Flat Map=2"}, exitUsage, append([]string{"ambiguous"}, ids...)},
		// The server answers INVALID_ARGUMENT with the same list; the CLI exits 2 on it.
		{"server", []string{"--set", "Flat Map=2", "--server", startServer(t), "--insecure"}, exitUsage,
			append([]string{"InvalidArgument", "ambiguous"}, ids...)},
		{"the first ID", []string{"--set", ids[0] + "=4"}, exitAllow, nil},
		{"the second ID", []string{"--set", ids[1] + "=4"}, exitAllow, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			verb := "check"
			if tt.name == "decide" {
				verb = "decide"
			}
			code, _, stderr := runCLI(t, append([]string{verb, path}, tt.args...)...)
			if code != tt.wantCode {
				t.Fatalf("exit %d (stderr %q), want %d", code, stderr, tt.wantCode)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
		})
	}
}
