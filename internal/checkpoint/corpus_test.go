package checkpoint

import (
	"testing"

	corpustest "github.com/flinkpreflight/preflight/internal/corpus"
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
	var out []corpusFile
	for _, f := range corpustest.Files(t) {
		out = append(out, corpusFile{path: f.Path, version: f.HeaderVersion, kind: f.Kind})
	}
	return out
}
