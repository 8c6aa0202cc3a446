// Package scenariotest writes generated checkpoints (scenarios.Synthetic) for tests. It is apart
// from checkpointtest because scenarios builds on rescale, whose own tests use checkpointtest.
package scenariotest

import (
	"bytes"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/scenarios"
)

// Synthetic returns the _metadata bytes of the generated checkpoint s (scenarios.WriteSynthetic).
func Synthetic(tb testing.TB, s scenarios.Synthetic) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := scenarios.WriteSynthetic(&b, s); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// SyntheticLayout returns the _metadata bytes of the generated checkpoint s and their layout.
func SyntheticLayout(tb testing.TB, s scenarios.Synthetic) ([]byte, *checkpoint.Layout) {
	tb.Helper()
	file := Synthetic(tb, s)
	l, err := checkpoint.ReadLayout(bytes.NewReader(file))
	if err != nil {
		tb.Fatal(err)
	}
	return file, l
}
