package testutil

import (
	"os"
	"path/filepath"
	"strings"
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

// WantError fails the test at once unless err matches want: nil when want is "", else an error
// whose text contains want. It reports whether an error was wanted (the caller then stops).
func WantError(tb testing.TB, err error, want string) bool {
	tb.Helper()
	if want == "" {
		if err != nil {
			tb.Fatal(err)
		}
		return false
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		tb.Fatalf("error %v, want one containing %q", err, want)
	}
	return true
}
