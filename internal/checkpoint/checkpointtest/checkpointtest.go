// Package checkpointtest builds checkpoint layouts for tests: from a Metadata written through the
// real encoder and read back through the real decoder, or from _metadata files. Test failures
// (an encode or decode error, a missing file) stop the test.
package checkpointtest

import (
	"bytes"
	"iter"
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
	l, err := checkpoint.ReadLayout(bytes.NewReader(b.Bytes()))
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// Decodable yields the path and layout of each _metadata file in paths that reads and decodes,
// passing over the others (corpus tests that check something of every decodable file).
func Decodable(paths []string) iter.Seq2[string, *checkpoint.Layout] {
	return func(yield func(string, *checkpoint.Layout) bool) {
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			l, err := checkpoint.ReadLayout(bytes.NewReader(b))
			if err != nil {
				continue
			}
			if !yield(p, l) {
				return
			}
		}
	}
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

// CorpusFile is File for a corpus file that may be absent: the test is skipped without it.
func CorpusFile(tb testing.TB, path string) *checkpoint.Layout {
	tb.Helper()
	if _, err := os.Stat(path); err != nil {
		tb.Skipf("corpus file absent: %v", err)
	}
	return File(tb, path)
}

// Metadata reads the _metadata file at path into the full model (checkpoint.ReadBytes), for tests
// that rewrite or compare it.
func Metadata(tb testing.TB, path string) *checkpoint.Metadata {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := checkpoint.ReadBytes(b)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return m
}
