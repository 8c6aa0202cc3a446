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

// DependOn reads every file of paths (a folder: its Go files and go.mod, below it at any depth),
// so that Go's test cache, which replays a package's passing result while the files its tests
// opened are unchanged, runs the test again when one of them changes: for a test whose subject
// is built or read by another program (go build, go list, javac) rather than linked into the
// test binary.
func DependOn(tb testing.TB, paths ...string) {
	tb.Helper()
	for _, root := range paths {
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")):
				return filepath.SkipDir
			case d.IsDir() || p != root && !strings.HasSuffix(p, ".go") && d.Name() != "go.mod":
				return nil
			}
			_, err = os.ReadFile(p)
			return err
		})
		if err != nil {
			tb.Fatalf("reading the sources the test depends on: %v", err)
		}
	}
}
