package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFile writes data to path, creating the folders above it; an error fails the test.
func WriteFile(tb testing.TB, path string, data []byte) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
}
