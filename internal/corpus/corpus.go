// Package corpus lists the real Flink files that tests read: the shared corpus beside the
// repository (../shared/corpus, or $PREFLIGHT_CORPUS) as described by its MANIFEST.tsv. Tests call
// it to find the files and to skip cleanly when the corpus is absent, as in a plain clone. No
// binary imports it, and it never copies a file into the repository.
package corpus

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// KindMetadata is the manifest's kind of `_metadata` files (the others are state files and
// legacy operator snapshots).
const KindMetadata = "metadata"

// File is one row of MANIFEST.tsv.
type File struct {
	Path          string // usable from the test's working directory
	Kind          string // metadata, state-file, legacy-operator-snapshot
	HeaderVersion string // the _metadata format version, for metadata rows
}

// Dir returns $PREFLIGHT_CORPUS, or ../shared/corpus beside the repository root (the folder with
// go.mod above the working directory).
func Dir() string {
	if d := os.Getenv("PREFLIGHT_CORPUS"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(dir), "shared", "corpus")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Files returns every row of the manifest; it skips tb when the corpus is absent.
func Files(tb testing.TB) []File {
	tb.Helper()
	dir := Dir()
	f, err := os.Open(filepath.Join(dir, "MANIFEST.tsv"))
	if err != nil {
		tb.Skipf("shared corpus not available (%v): it lives at ../shared/corpus beside the repository, or set PREFLIGHT_CORPUS", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cols map[string]int
	var out []File
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if cols == nil {
			cols = map[string]int{}
			for i, c := range fields {
				cols[c] = i
			}
			for _, want := range []string{"local_path", "kind"} {
				if _, ok := cols[want]; !ok {
					tb.Fatalf("MANIFEST.tsv has no %s column", want)
				}
			}
			continue
		}
		get := func(c string) string {
			if i, ok := cols[c]; ok && i < len(fields) {
				return fields[i]
			}
			return ""
		}
		out = append(out, File{Path: filepath.Join(dir, get("local_path")), Kind: get("kind"), HeaderVersion: get("header_version")})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// Metadata returns the paths of the `_metadata` files; it skips tb when the corpus is absent.
func Metadata(tb testing.TB) []string {
	tb.Helper()
	var out []string
	for _, f := range Files(tb) {
		if f.Kind == KindMetadata {
			out = append(out, f.Path)
		}
	}
	return out
}
