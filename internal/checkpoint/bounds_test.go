package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// readAllWays decodes b with every entry point: the full codec, the in-memory layout reader and
// the streaming layout reader (one byte per read, to cross every buffer refill).
func readAllWays(b []byte) map[string]error {
	_, e1 := ReadBytes(b)
	_, e2 := readLayoutBytes(b)
	_, e3 := ReadLayout(iotest.OneByteReader(bytes.NewReader(b)))
	return map[string]error{"ReadBytes": e1, "ReadLayoutBytes": e2, "ReadLayout": e3}
}

// TestTrailingBytesRefused appends bytes to a real file of every format version: Flink never
// writes them, so every reader refuses the file at the offset where its content ended.
func TestTrailingBytesRefused(t *testing.T) {
	entries, err := os.ReadDir(fixturesDir)
	if err != nil {
		t.Skipf("fixtures not available (%v)", err)
	}
	junk := []struct {
		name  string
		bytes []byte
	}{
		{"one zero byte", []byte{0}},
		{"three bytes", []byte{1, 2, 3}},
		{"a second copy of the magic", []byte{0x49, 0x60, 0x67, 0x2d}},
		{"4 KiB", bytes.Repeat([]byte{0xEE}, 4096)},
	}
	files := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".metadata") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(fixturesDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ReadBytes(b); err != nil {
			continue // a legacy grammar this codec refuses anyway
		}
		files++
		for _, j := range junk {
			for how, err := range readAllWays(append(bytes.Clone(b), j.bytes...)) {
				var fe *FormatError
				if !errors.As(err, &fe) || fe.Offset != int64(len(b)) || !strings.Contains(fe.Msg, "after the end") {
					t.Errorf("%s + %s, %s: want a FormatError at byte %d about bytes after the end, got %v", e.Name(), j.name, how, len(b), err)
				}
			}
		}
	}
	if files < 10 {
		t.Fatalf("only %d fixtures decoded", files)
	}
}

// boundsFile is a one-operator file of the given format with the stored parallelism and max
// parallelism; pOff is the byte offset of the parallelism field.
func boundsFile(t *testing.T, version int32, p, maxP int32) (b []byte, pOff int64) {
	t.Helper()
	m := &Metadata{Version: version, CheckpointID: 7, Operators: []OperatorState{{
		ID: mustID("0123456789abcdeffedcba9876543210"), Parallelism: p, MaxParallelism: maxP, ChainLength: 1,
		Subtasks: []SubtaskEntry{{Index: 0, State: &SubtaskState{Duration: -1}}},
	}}}
	if version < 4 {
		m.Trailing = []byte{}
	}
	b = encode(t, m)
	// magic, version, checkpoint ID, master state count, operator count, [name, uid,] operator ID.
	pOff = 4 + 4 + 8 + 4 + 4 + 16
	if version >= 5 {
		pOff += 4
	}
	return b, pOff
}

// TestStoredParallelismBounds: a file whose operator has a parallelism or max parallelism that
// Flink can never write (outside 1..32768, or parallelism above max parallelism) is a
// FormatError naming the operator, the field and its offset, in every format and reader.
func TestStoredParallelismBounds(t *testing.T) {
	tests := []struct {
		name      string
		p, maxP   int32
		field     string // "" = valid
		fieldOff  int64  // relative to the parallelism field
		msgSubstr string
	}{
		{"smallest", 1, 1, "", 0, ""},
		{"Flink's bound", 32768, 32768, "", 0, ""},
		{"max parallelism one above the bound", 1, 32769, "operators[0].maxParallelism", 4, "outside 1..32768"},
		{"max parallelism MaxInt32", 4, 2147483647, "operators[0].maxParallelism", 4, "outside 1..32768"},
		{"both above the bound", 40000, 40000, "operators[0].parallelism", 0, "outside 1..32768"},
		{"parallelism above max parallelism", 5, 4, "operators[0].parallelism", 0, "not smaller or equal to max parallelism 4"},
		{"zero parallelism", 0, 128, "operators[0].parallelism", 0, "outside 1..32768"},
		{"negative parallelism", -1, 128, "operators[0].parallelism", 0, "outside 1..32768"},
		{"zero max parallelism", 1, 0, "operators[0].maxParallelism", 4, "outside 1..32768"},
	}
	for v := int32(2); v <= 7; v++ {
		for _, tt := range tests {
			b, pOff := boundsFile(t, v, tt.p, tt.maxP)
			for how, err := range readAllWays(b) {
				if tt.field == "" {
					if err != nil {
						t.Errorf("v%d %s, %s: %v", v, tt.name, how, err)
					}
					continue
				}
				var fe *FormatError
				if !errors.As(err, &fe) || fe.Field != tt.field || fe.Offset != pOff+tt.fieldOff ||
					!strings.Contains(fe.Msg, tt.msgSubstr) || !strings.Contains(fe.Msg, "0123456789abcdeffedcba9876543210") {
					t.Errorf("v%d %s, %s: want a FormatError at byte %d (%s, %q, naming the operator), got %#v", v, tt.name, how, pOff+tt.fieldOff, tt.field, tt.msgSubstr, err)
				}
			}
		}
	}
}

// TestStoredParallelismBoundsFormat1 patches the task of a real format-1 file (Flink 1.2).
func TestStoredParallelismBoundsFormat1(t *testing.T) {
	orig := fixture(t, "v1-flink1.2-nonKeyed-savepoint.metadata")
	// magic, version, checkpoint ID, task count, JobVertexID: the first task's parallelism.
	const pOff = 4 + 4 + 8 + 4 + 16
	tests := []struct {
		name    string
		p, maxP int32
		field   string
		off     int64
	}{
		{"max parallelism above the bound", -1, 40000, "tasks[0].maxParallelism", pOff + 4},
		{"parallelism above max parallelism", -1, 0, "tasks[0].parallelism", pOff}, // keeps p, sets maxP below it
		{"zero parallelism", 0, -1, "tasks[0].parallelism", pOff},
	}
	for _, tt := range tests {
		b := bytes.Clone(orig)
		p := int32(binary.BigEndian.Uint32(b[pOff:]))
		if tt.p >= 0 {
			binary.BigEndian.PutUint32(b[pOff:], uint32(tt.p))
		}
		switch {
		case tt.maxP > 0:
			binary.BigEndian.PutUint32(b[pOff+4:], uint32(tt.maxP))
		case tt.maxP == 0:
			binary.BigEndian.PutUint32(b[pOff+4:], uint32(p-1))
		}
		for how, err := range readAllWays(b) {
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Field != tt.field || fe.Offset != tt.off || !strings.Contains(fe.Msg, "task ") {
				t.Errorf("%s, %s: want a FormatError at byte %d (%s), got %#v", tt.name, how, tt.off, tt.field, err)
			}
		}
	}
}
