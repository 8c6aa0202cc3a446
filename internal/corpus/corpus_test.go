package corpus

import (
	"os"
	"testing"
)

func TestMetadata(t *testing.T) {
	paths := Metadata(t)
	if len(paths) == 0 {
		t.Fatal("the manifest lists no metadata files")
	}
	if _, err := os.Stat(paths[0]); err != nil {
		t.Errorf("first metadata file: %v", err)
	}
	t.Logf("%d metadata files", len(paths))
}

func TestMissingCorpusSkips(t *testing.T) {
	t.Setenv("PREFLIGHT_CORPUS", t.TempDir())
	skipped := true
	t.Run("inner", func(t *testing.T) {
		Files(t)
		skipped = false
	})
	if !skipped {
		t.Error("Files did not skip without a manifest")
	}
}
