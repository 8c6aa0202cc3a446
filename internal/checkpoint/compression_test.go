package checkpoint

import (
	"bytes"
	"testing"
)

// TestOperatorStreamCompression: the compression flag of an inline managed operator-state
// stream's header reaches the Layout the same way through ReadLayout and Metadata.Layout.
func TestOperatorStreamCompression(t *testing.T) {
	header := func(version int32, flag byte) []byte {
		return append([]byte{byte(version >> 24), byte(version >> 16), byte(version >> 8), byte(version)}, flag, 0, 0)
	}
	tests := []struct {
		name     string
		delegate StreamStateHandle
		want     Compression
	}{
		{"v6 compressed", &ByteStreamStateHandle{Name: "a", Data: header(6, 1)}, CompressionSnappy},
		{"v6 plain", &ByteStreamStateHandle{Name: "a", Data: header(6, 0)}, CompressionNone},
		{"v5 has no flag", &ByteStreamStateHandle{Name: "a", Data: header(5, 1)}, CompressionNone},
		{"not a header", &ByteStreamStateHandle{Name: "a", Data: header(0, 1)}, CompressionUnknown},
		{"too short", &ByteStreamStateHandle{Name: "a", Data: []byte{0, 0, 0, 6}}, CompressionUnknown},
		{"file stream", &RelativeFileStateHandle{RelativePath: "x", StateSize: 7}, CompressionUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := &OperatorStateHandle{Tag: 4, States: []StateEntry{{Name: "s", Offsets: []int64{5}}}, Delegate: tc.delegate}
			m := &Metadata{Version: 4, Operators: []OperatorState{{Parallelism: 1, MaxParallelism: 128, Subtasks: []SubtaskEntry{{
				State: &SubtaskState{ManagedOperatorState: OperatorStateSlot{Present: 1, Handle: h}, RawOperatorState: OperatorStateSlot{Present: 1, Handle: h}}}}}}}
			var b bytes.Buffer
			if err := Write(&b, m); err != nil {
				t.Fatal(err)
			}
			streamed, err := readLayoutBytes(b.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			decoded, err := ReadBytes(b.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			for name, l := range map[string]*Layout{"ReadLayout": streamed, "Metadata.Layout": decoded.Layout()} {
				st := l.Operators[0].Subtasks[0]
				if got := st.ManagedOperatorState.Compression; got != tc.want {
					t.Errorf("%s: managed compression %s, want %s", name, got, tc.want)
				}
				if got := st.RawOperatorState.Compression; got != CompressionUnknown {
					t.Errorf("%s: raw operator state has no header, got %s", name, got)
				}
			}
		})
	}
}
