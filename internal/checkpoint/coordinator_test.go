package checkpoint

import (
	"bytes"
	"testing"
)

// TestCoordinatorStatePrefix: the Layout keeps a coordinator state's first eight bytes (a source
// coordinator's serde and enumerator versions), whether read in bounded memory or from a decoded
// file.
func TestCoordinatorStatePrefix(t *testing.T) {
	for _, data := range [][]byte{
		{0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 9, 1, 2, 3},
		{0, 0, 0, 1, 0, 0},
		{},
	} {
		id := OperatorIDFromUID("source")
		m := &Metadata{Version: 3, CheckpointID: 1, Operators: []OperatorState{{ID: id, Parallelism: 1, MaxParallelism: 128,
			CoordinatorState: &ByteStreamStateHandle{Name: id.String(), Data: data}}}}
		var buf bytes.Buffer
		if err := Write(&buf, m); err != nil {
			t.Fatal(err)
		}
		want := data[:min(len(data), 8)]
		l, err := readLayoutBytes(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if got := l.Operators[0].CoordinatorState.Prefix(); !bytes.Equal(got, want) || l.Operators[0].CoordinatorState.Size != int64(len(data)) {
			t.Errorf("ReadLayout of %d bytes: prefix %v, size %d; want %v", len(data), got, l.Operators[0].CoordinatorState.Size, want)
		}
		if got := m.Layout().Operators[0].CoordinatorState.Prefix(); !bytes.Equal(got, want) {
			t.Errorf("Metadata.Layout of %d bytes: prefix %v, want %v", len(data), got, want)
		}
	}
}
