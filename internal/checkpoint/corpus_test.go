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

// corpusFile is one `kind == metadata` row of MANIFEST.tsv.
type corpusFile struct {
	path    string
	version string
}

func metadataCorpus(t testing.TB) []corpusFile {
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
		if get("kind") != "metadata" {
			continue
		}
		out = append(out, corpusFile{path: filepath.Join(corpusDir, get("local_path")), version: get("header_version")})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
