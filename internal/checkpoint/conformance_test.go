package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"reflect"
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
		if sl, err := ReadLayout(&chunkReader{b: b, n: 13}); err != nil || !reflect.DeepEqual(sl, l) {
			t.Errorf("%s: ReadLayout in 13-byte reads differs: %v", cf.path, err)
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

// compareLayout checks that the streaming Layout equals the one derived from the faithful model.
func compareLayout(t *testing.T, name string, m *Metadata, l *Layout) {
	t.Helper()
	want := m.Layout()
	want.Size = l.Size
	if !reflect.DeepEqual(want, l) {
		for i := range min(len(want.Operators), len(l.Operators)) {
			if !reflect.DeepEqual(want.Operators[i], l.Operators[i]) {
				t.Errorf("%s: operator %d: streaming layout\n%+v\nmodel layout\n%+v", name, i, l.Operators[i], want.Operators[i])
				return
			}
		}
		t.Errorf("%s: streaming layout differs from the model's", name)
	}
}

// TestCorpusNotMetadata feeds every state file and test snapshot of the corpus (which are not
// _metadata files) to the readers: each must be rejected with a *FormatError at offset 0.
func TestCorpusNotMetadata(t *testing.T) {
	counts := map[string]int{}
	for _, cf := range corpus(t) {
		if cf.kind == "metadata" {
			continue
		}
		b, err := os.ReadFile(cf.path)
		if err != nil {
			t.Errorf("%s: %v", cf.path, err)
			continue
		}
		_, err = readLayoutBytes(b)
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Offset != 0 {
			t.Errorf("%s: %v", cf.path, err)
			continue
		}
		counts[cf.kind]++
	}
	t.Logf("rejected as not _metadata: %v", counts)
}
