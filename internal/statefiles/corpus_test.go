package statefiles

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/checkpoint/checkpointtest"
	"github.com/flinkpreflight/preflight/internal/corpus"
	"github.com/flinkpreflight/preflight/internal/lifecycle"
	"github.com/flinkpreflight/preflight/internal/source"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// TestCorpusRelativeFiles verifies the real checkpoints of the shared corpus that reference
// state files relative to their folder. A folder that holds every such file must verify clean
// (relative handles resolved as Flink resolves them); a folder the corpus keeps without its
// state files is reported as such, file by file, never passed off as verified. Absolute file
// handles (paths on the machines that wrote the corpus) are counted, not judged.
func TestCorpusRelativeFiles(t *testing.T) {
	var withRelative, complete, incomplete, verified, absOnly int
	for _, f := range corpus.Files(t) {
		if f.Kind != corpus.KindMetadata {
			continue
		}
		rel, abs := refCounts(t, f.Path)
		if rel == 0 {
			if abs > 0 {
				absOnly++
				t.Logf("%s: %d absolute handles only (paths of the machine that wrote it): not verified", f.Path, abs)
			}
			continue
		}
		withRelative++
		dir := filepath.Dir(f.Path)
		o, err := source.New(source.Config{Allow: []string{dir}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Check(context.Background(), o, f.Path, time.Minute)
		o.Close()
		if err != nil {
			t.Errorf("%s: %v", f.Path, err)
			continue
		}
		sameAsPrune(t, f.Path, res.Files)
		var missing []string
		relFiles := 0
		for i, file := range res.Files {
			if !file.Relative {
				continue // an absolute handle
			}
			relFiles++
			switch k := res.Outcomes[i].Kind; k {
			case pb.FileProblemKind_FILE_PROBLEM_KIND_UNSPECIFIED:
				verified++
			case pb.FileProblemKind_FILE_PROBLEM_KIND_MISSING:
				missing = append(missing, file.Recorded)
			default:
				t.Errorf("%s: %s: %v %s (recorded %d bytes, found %d)", f.Path, file.Recorded, k, res.Outcomes[i].Detail, expected(&file), res.Outcomes[i].Actual)
			}
		}
		if len(missing) == 0 {
			complete++
			if abs > 0 {
				t.Logf("%s: %d relative files verified; %d absolute handles not judged", f.Path, relFiles, abs)
			}
			continue
		}
		incomplete++
		t.Logf("%s: the corpus folder lacks %d of %d relative state files (e.g. %s): not verifiable here", f.Path, len(missing), relFiles, missing[0])
	}
	t.Logf("%d corpus checkpoints reference relative files: %d folders complete and verified clean (%d distinct files), %d without (some of) their state files",
		withRelative, complete, verified, incomplete)
	t.Logf("%d corpus checkpoints reference only absolute files", absOnly)
}

// refCounts counts the relative and absolute file references of the _metadata at p.
func refCounts(t *testing.T, p string) (rel, abs int) {
	t.Helper()
	r, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	err = checkpoint.ReadFileRefs(context.Background(), r, 0, func(f checkpoint.FileRef) {
		if f.Kind == checkpoint.StreamRelativeFile {
			rel++
		} else {
			abs++
		}
	})
	if err != nil {
		t.Logf("%s: %v", p, err)
	}
	return rel, abs
}

// sameAsPrune checks that the relative files listed from the streaming decoder are those prune
// keeps beside a pruned copy (lifecycle.RelativeFiles over the faithful model).
func sameAsPrune(t *testing.T, p string, files []File) {
	t.Helper()
	m := checkpointtest.Metadata(t, p)
	var got []string
	for _, f := range files {
		if f.Relative {
			got = append(got, f.Recorded)
		}
	}
	slices.Sort(got)
	if want := lifecycle.RelativeFiles(m); !slices.Equal(got, want) {
		t.Errorf("%s: relative files %q, prune keeps %q", p, got, want)
	}
}
