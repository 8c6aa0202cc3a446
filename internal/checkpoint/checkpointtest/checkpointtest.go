// Package checkpointtest builds checkpoint layouts for tests: from a Metadata written through the
// real encoder and read back through the real decoder, or from a _metadata file. Test failures
// (an encode or decode error, a missing file) stop the test.
package checkpointtest

import (
	"bytes"
	"os"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// Layout writes m as a _metadata file in memory and decodes it again.
func Layout(tb testing.TB, m *checkpoint.Metadata) *checkpoint.Layout {
	tb.Helper()
	var b bytes.Buffer
	if err := checkpoint.Write(&b, m); err != nil {
		tb.Fatal(err)
	}
	l, err := checkpoint.ReadLayoutBytes(b.Bytes())
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// File decodes the _metadata file at path.
func File(tb testing.TB, path string) *checkpoint.Layout {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	l, err := checkpoint.ReadLayout(f)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}
