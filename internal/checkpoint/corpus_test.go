package checkpoint

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The shared corpus and fixtures live outside the repository; tests skip when they are absent.
const (
	corpusDir   = "../../../shared/corpus"
	fixturesDir = "../../../shared/spec/fixtures/flink-metadata"
)

// corpusFile is one row of MANIFEST.tsv.
type corpusFile struct {
	path    string
	version string
	kind    string // metadata, state-file, legacy-operator-snapshot
}

func metadataCorpus(t testing.TB) []corpusFile {
	t.Helper()
	var out []corpusFile
	for _, f := range corpus(t) {
		if f.kind == "metadata" {
			out = append(out, f)
		}
	}
	return out
}

func corpus(t testing.TB) []corpusFile {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, "MANIFEST.tsv"))
	if err != nil {
		t.Skipf("shared corpus not available (%v); it lives at %s", err, corpusDir)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cols map[string]int
	var out []corpusFile
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if cols == nil {
			cols = map[string]int{}
			for i, c := range fields {
				cols[c] = i
			}
			continue
		}
		get := func(c string) string {
			if i, ok := cols[c]; ok && i < len(fields) {
				return fields[i]
			}
			return ""
		}
		out = append(out, corpusFile{path: filepath.Join(corpusDir, get("local_path")), version: get("header_version"), kind: get("kind")})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
