package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

func TestCorpusConformance(t *testing.T) {
	files := metadataCorpus(t)
	var decoded, identical, unsupported, legacyV1, decodedProps int
	for _, cf := range files {
		b, err := os.ReadFile(cf.path)
		if err != nil {
			t.Errorf("%s: %v", cf.path, err)
			continue
		}
		m, err := ReadBytes(b)
		if cf.version == "0" {
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Msg != "unsupported legacy format v0 (Flink 1.1); take a savepoint with Flink ≥ 1.3" {
				t.Errorf("%s: v0 file: got %v", cf.path, err)
			}
			unsupported++
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", cf.path, err)
			continue
		}
		decoded++
		l, err := ReadLayout(bytes.NewReader(b))
		if err != nil {
			t.Errorf("%s: ReadLayout: %v", cf.path, err)
			continue
		}
		if l.Size != int64(len(b)) {
			t.Errorf("%s: Layout.Size %d, file %d", cf.path, l.Size, len(b))
		}
		compareLayout(t, cf.path, m, l)
		if m.Version >= 4 {
			if l.PropertiesError != "" {
				t.Errorf("%s: trailer: %s", cf.path, l.PropertiesError)
			} else {
				decodedProps++
			}
		}
		if m.Version == 1 {
			legacyV1++
			continue
		}
		var buf bytes.Buffer
		if err := Write(&buf, m); err != nil {
			t.Errorf("%s: Write: %v", cf.path, err)
			continue
		}
		if !bytes.Equal(buf.Bytes(), b) {
			t.Errorf("%s: re-encoding differs (%d vs %d bytes, first difference at %d)", cf.path, buf.Len(), len(b), firstDiff(buf.Bytes(), b))
			continue
		}
		identical++
	}
	t.Logf("corpus: %d metadata files; decoded %d (of which %d format 1), re-encoded byte-identical %d, unsupported format 0: %d, format-4+ trailers decoded: %d",
		len(files), decoded, legacyV1, identical, unsupported, decodedProps)
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// compareLayout checks that the streaming Layout agrees with the faithful model.
func compareLayout(t *testing.T, name string, m *Metadata, l *Layout) {
	t.Helper()
	want := m.Layout()
	if len(want.Operators) != len(l.Operators) {
		t.Errorf("%s: layout has %d operators, model %d", name, len(l.Operators), len(want.Operators))
		return
	}
	for i := range want.Operators {
		a, b := &want.Operators[i], &l.Operators[i]
		if a.ID != b.ID || a.Parallelism != b.Parallelism || a.MaxParallelism != b.MaxParallelism || len(a.Subtasks) != len(b.Subtasks) || a.Name != b.Name || a.UID != b.UID {
			t.Errorf("%s: operator %d differs: layout %v/%d/%d/%d, model %v/%d/%d/%d", name, i, b.ID, b.Parallelism, b.MaxParallelism, len(b.Subtasks), a.ID, a.Parallelism, a.MaxParallelism, len(a.Subtasks))
		}
	}
}
