package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// addSeeds seeds f with small generated files. The example checkpoints of internal/scenarios are
// committed seeds under testdata/fuzz/<target>/ (written by its genexamples command), so the
// corpus never depends on ../shared.
func addSeeds(f *testing.F) {
	for _, m := range []*Metadata{exoticMetadata(), keyedSeedMetadata(), {Version: 3, CheckpointID: 1}, {Version: 6, Operators: []OperatorState{{ID: OperatorIDFromUID("sink"), Parallelism: 1, MaxParallelism: 1, FullyFinished: true}}}} {
		var buf bytes.Buffer
		if err := Write(&buf, m); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
}

// keyedSeedMetadata has key-group handles of each shape the one-pass key-group decoder
// distinguishes: ascending with empty key groups, equal offsets, a stream shorter than the last
// offset, and descending offsets (the sort-based fallback).
func keyedSeedMetadata() *Metadata {
	m := &Metadata{Version: 6, CheckpointID: 7, Trailer: mustHex(templateA)}
	op := OperatorState{ID: OperatorIDFromUID("keyed"), UID: "keyed", Parallelism: 4, MaxParallelism: 16}
	for i, offs := range [][]int64{{8, 0, 20, 31}, {8, 8, 0, 40}, {8, 16, 24, 90}, {40, 30, 0, 8}} {
		h := &KeyGroupsStateHandle{Tag: TagKeyGroupsHandle, StartKeyGroup: int32(4 * i), NumKeyGroups: 4, Offsets: offs,
			Delegate: &FileStateHandle{Path: "s3://b/chk-7/k", StateSize: 64}}
		op.Subtasks = append(op.Subtasks, SubtaskEntry{Index: int32(i), State: &SubtaskState{ManagedKeyedState: h}})
	}
	m.Operators = append(m.Operators, op)
	return m
}

var (
	fuzzDecoder = NewDecoder()
	// fuzzPrev is fuzzDecoder's Layout of the previous input and readLayoutBytes' of the same
	// input: a Layout must not change when its Decoder goes on to the next input.
	fuzzPrev struct{ got, want *Layout }
)

func FuzzRead(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ReadBytes(b)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FormatError", err)
			}
			if fe.Offset < 0 || fe.Offset > int64(len(b)) {
				t.Fatalf("error offset %d outside the %d-byte input", fe.Offset, len(b))
			}
		}
		l, lerr := readLayoutBytes(b)
		if (err == nil) != (lerr == nil) {
			t.Fatalf("ReadBytes: %v; readLayoutBytes: %v", err, lerr)
		}
		// Through a reader that returns 7 bytes at a time, so that fields straddle refills.
		sl, serr := ReadLayout(&chunkReader{b: b, n: 7})
		if (serr == nil) != (lerr == nil) {
			t.Fatalf("ReadLayout from a reader: %v; from bytes: %v", serr, lerr)
		}
		if lerr == nil && !reflect.DeepEqual(sl, l) {
			t.Fatalf("ReadLayout from a reader differs from readLayoutBytes")
		}
		// One Decoder across all inputs, so state left by an earlier (failed) input would show.
		dl, derr := fuzzDecoder.readLayout(b, nil, nil)
		if !reflect.DeepEqual(derr, lerr) || !reflect.DeepEqual(dl, l) {
			t.Fatalf("reused Decoder: %v; readLayoutBytes: %v", derr, lerr)
		}
		if fuzzPrev.got != nil && !reflect.DeepEqual(fuzzPrev.got, fuzzPrev.want) {
			t.Fatalf("the previous input's Layout changed when the Decoder read this one")
		}
		fuzzPrev.got, fuzzPrev.want = dl, l
		if err == nil {
			want := m.Layout()
			want.Size = l.Size
			if l.Size != int64(len(b)) || !reflect.DeepEqual(want, l) {
				t.Fatalf("streaming layout differs from the model's")
			}
		}
		// The file references, streamed, are those of the faithful model.
		var refs []FileRef
		rerr := ReadFileRefs(context.Background(), &chunkReader{b: b, n: 7}, 0, func(f FileRef) { refs = append(refs, f) })
		if (rerr == nil) != (lerr == nil) {
			t.Fatalf("ReadFileRefs: %v; readLayoutBytes: %v", rerr, lerr)
		}
		if err == nil && rerr == nil && !reflect.DeepEqual(refs, modelFileRefs(m)) {
			t.Fatalf("streamed file references differ from the model's")
		}
	})
}

// modelFileRefs walks a decoded file's references as ReadFileRefs hands them out.
func modelFileRefs(m *Metadata) []FileRef {
	var out []FileRef
	for _, op := range m.Operators {
		for _, e := range op.Subtasks {
			if e.State != nil {
				e.State.fileRefs(func(f FileRef) { f.Operator, f.Subtask = op.ID, int(e.Index); out = append(out, f) })
			}
		}
	}
	for _, t := range m.Tasks {
		for i := range t.Subtasks {
			t.Subtasks[i].fileRefs(func(f FileRef) { f.Operator, f.Subtask = t.JobVertexID, int(t.Subtasks[i].Index); out = append(out, f) })
		}
	}
	return out
}

func FuzzRoundTrip(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m1, err := ReadBytes(b)
		if err != nil || m1.Version < 2 {
			return
		}
		var w1 bytes.Buffer
		if err := Write(&w1, m1); err != nil {
			t.Fatalf("Write of a decoded file: %v", err)
		}
		m2, err := ReadBytes(w1.Bytes())
		if err != nil {
			t.Fatalf("re-read of the written file: %v", err)
		}
		if !equalExported(reflect.ValueOf(m1), reflect.ValueOf(m2)) {
			t.Fatalf("read → write → read changed the model")
		}
		var w2 bytes.Buffer
		if err := Write(&w2, m2); err != nil || !bytes.Equal(w1.Bytes(), w2.Bytes()) {
			t.Fatalf("second write differs: %v", err)
		}
	})
}

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	b []byte
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[k:]
	return k, nil
}

func FuzzMUTF8(f *testing.F) {
	f.Add([]byte("a\xc0\x80\xc3\xa9\xe2\x82\xac\xed\xa0\xbd\xed\xb8\x80"))
	f.Add([]byte{0xED, 0xA0, 0xBD, 'x'})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeMUTF8(b)
		if err != nil {
			return
		}
		enc, err := appendMUTF8(nil, s)
		if err != nil {
			// Java accepts a raw 0x00 byte, which re-encodes as C0 80, so a long input may grow
			// past the limit; nothing else may fail.
			if !strings.Contains(err.Error(), "too long") {
				t.Fatalf("encoding a decoded string: %v", err)
			}
			return
		}
		s2, err := decodeMUTF8(enc[2:])
		if err != nil || s2 != s {
			t.Fatalf("round trip: %q -> %q (%v)", s, s2, err)
		}
	})
}
