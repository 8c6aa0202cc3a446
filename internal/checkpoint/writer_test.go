package checkpoint

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// templateA is the regular-checkpoint trailer of spec §5.3 (604 bytes).
const templateA = "aced0005737200386f72672e6170616368652e666c696e6b2e72756e74696d65" +
	"2e636865636b706f696e742e436865636b706f696e7450726f70657274696573" +
	"00000000000000020200085a00106469736361726443616e63656c6c65645a00" +
	"0d646973636172644661696c65645a000f6469736361726446696e6973686564" +
	"5a000f6469736361726453756273756d65645a00106469736361726453757370" +
	"656e6465645a0006666f726365645a0009756e636c61696d65644c000e636865" +
	"636b706f696e74547970657400324c6f72672f6170616368652f666c696e6b2f" +
	"72756e74696d652f636865636b706f696e742f536e617073686f74547970653b" +
	"787001010101010000737200326f72672e6170616368652e666c696e6b2e7275" +
	"6e74696d652e636865636b706f696e742e436865636b706f696e7454797065d6" +
	"de4f0305ae1d3a0200024c00046e616d657400124c6a6176612f6c616e672f53" +
	"7472696e673b4c001473686172696e6746696c65735374726174656779740047" +
	"4c6f72672f6170616368652f666c696e6b2f72756e74696d652f636865636b70" +
	"6f696e742f536e617073686f74547970652453686172696e6746696c65735374" +
	"7261746567793b787074000a436865636b706f696e747e7200456f72672e6170" +
	"616368652e666c696e6b2e72756e74696d652e636865636b706f696e742e536e" +
	"617073686f74547970652453686172696e6746696c6573537472617465677900" +
	"000000000000001200007872000e6a6176612e6c616e672e456e756d00000000" +
	"000000001200007870740010464f52574152445f4241434b57415244"

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func encode(t testing.TB, m *Metadata) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, m); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.Bytes()
}

// exoticMetadata builds a format-7 file with everything no public file contains: file-merging
// handles (tags 15, 16, 17), changelog handles (8, 9, 10, 13, 14), legacy incremental (5) and
// key-groups (3) handles, tagged and merged channel state, and refCheckpointId markers.
func exoticMetadata() *Metadata {
	seg := &SegmentFileStateHandle{StartPos: 4096, StateSize: 100, Scope: 1, PhysicalPath: "s3://b/chk/shared/merged-1", LogicalFileID: "lf-1"}
	chFile := &FileStateHandle{Path: "s3://b/chk-3/channel", StateSize: 500}
	return &Metadata{
		Version:      7,
		CheckpointID: 3,
		MasterStates: []MasterState{{Version: 1, Name: "hook", Payload: []byte{0, 0, 0, 42}}},
		Operators: []OperatorState{
			{
				Name: "Source: s", UID: "source", ID: OperatorIDFromUID("source"), Parallelism: 3, MaxParallelism: 128,
				CoordinatorState: &ByteStreamStateHandle{Name: OperatorIDFromUID("source").String(), Data: []byte("enumerator")},
				Subtasks: []SubtaskEntry{
					{Index: 0, State: &SubtaskState{
						ManagedOperatorState: OperatorStateSlot{Present: 1, Handle: &OperatorStateHandle{
							Tag: TagSegmentPartitionableOperatorStateHandle, TaskOwnedDir: "s3://b/taskowned", SharedDir: "s3://b/shared",
							States: []StateEntry{
								{Name: "a", Mode: SplitDistribute, Offsets: []int64{10, 20, 30}},
								{Name: "u", Mode: Union, Offsets: []int64{40, 50}},
								{Name: "b", Mode: Broadcast, Offsets: []int64{60}},
							},
							Delegate: seg,
						}},
						RawOperatorState: OperatorStateSlot{Present: 1}, // present flag, null handle
						ManagedKeyedState: &ChangelogStateBackendHandle{
							Tag: TagChangelogHandleV2, StartKeyGroup: 0, NumKeyGroups: 43, CheckpointedSize: 999,
							Materialized: []KeyedStateHandle{
								&KeyGroupsStateHandle{Tag: TagKeyGroupsHandleV2, StartKeyGroup: 0, NumKeyGroups: 4, Offsets: []int64{0, 100, 0, 150},
									Delegate: &ByteStreamStateHandle{Name: "file:/x", Data: make([]byte, 200)}, StateHandleID: "kg-id"},
								nil,
							},
							NonMaterialized: []KeyedStateHandle{
								&InMemoryChangelogStateHandle{StartKeyGroup: 0, NumKeyGroups: 43, From: 0, To: 2,
									Changes: []StateChange{{KeyGroup: -1, Data: []byte("meta")}, {KeyGroup: 7, Data: []byte("x")}}, StateHandleID: "mem"},
								&ChangelogStateHandleStreamImpl{Tag: TagChangelogFileIncrementHandleV2, StartKeyGroup: 0, NumKeyGroups: 43,
									Handles:   []ChangelogSegment{{Offset: 0, Handle: &FileStateHandle{Path: "s3://b/cl/1", StateSize: 70}}, {Offset: 8, Handle: &RelativeFileStateHandle{RelativePath: "cl2", StateSize: 30}}},
									StateSize: 100, CheckpointedSize: 100, StateHandleID: "cl", StorageIdentifier: "filesystem"},
							},
							MaterializationID: 2, CheckpointID: 3, StateHandleID: "changelog",
						},
						RawKeyedState: &ChangelogStateBackendHandle{
							Tag: TagChangelogHandle, StartKeyGroup: 0, NumKeyGroups: 43, CheckpointedSize: 5,
							Materialized: []KeyedStateHandle{
								&IncrementalKeyedStateHandle{Tag: TagIncrementalKeyGroupsHandle, CheckpointID: 1, BackendID: "b", StartKeyGroup: 0, NumKeyGroups: 43, CheckpointedSize: -1,
									MetaData:    &KeyGroupsStateHandle{Tag: TagKeyGroupsHandle, StartKeyGroup: 0, NumKeyGroups: 1, Offsets: []int64{8}, Delegate: &FileStateHandle{Path: "f", StateSize: 20}},
									SharedFiles: []HandleAndLocalPath{{LocalPath: "1.sst", Handle: &FileStateHandle{Path: "s", StateSize: 1000}}}},
								&KeyGroupsStateHandle{Tag: TagKeyGroupsHandle, StartKeyGroup: 0, NumKeyGroups: 0, Offsets: []int64{}, Delegate: nil},
							},
							NonMaterialized: []KeyedStateHandle{
								&ChangelogStateHandleStreamImpl{Tag: TagChangelogFileIncrementHandle, StartKeyGroup: 0, NumKeyGroups: 43, StateSize: 1, CheckpointedSize: 1, StateHandleID: "old"},
							},
							MaterializationID: 1, CheckpointID: 1, StateHandleID: "changelog-old",
						},
						InputChannels: []ChannelStateHandle{
							{Tag: TagInputChannelHandle, SubtaskIndex: 0, Info1: 0, Info2: 1, Offsets: []int64{4}, StateSize: 12, Delegate: chFile},
							{Tag: TagMergedInputChannelHandle, SubtaskIndex: 0, StateSize: 30, Delegate: chFile, Channels: []MergedChannel{
								{Info1: 0, Info2: 2, StateSize: 10, Offsets: []int64{20}},
								{Info1: 1, Info2: 0, StateSize: 20, Offsets: []int64{40, 60}},
							}, BlobTrailing: []byte{0xEE}},
						},
						OutputChannels: []ChannelStateHandle{
							{Tag: TagResultSubpartitionHandle, SubtaskIndex: 0, Info1: 0, Info2: 0, Offsets: []int64{100}, StateSize: 8, Delegate: chFile},
							{Tag: TagMergedResultSubpartitionHandle, SubtaskIndex: 0, StateSize: 5, Delegate: chFile, Channels: []MergedChannel{{Info1: 0, Info2: 3, StateSize: 5, Offsets: []int64{200}}}},
						},
						RefMarker: 1, RefCheckpointID: 2,
					}},
					{Index: 1, Finished: true},
					{Index: 2, State: &SubtaskState{
						ManagedOperatorState: OperatorStateSlot{Present: 1, Handle: &OperatorStateHandle{
							Tag: TagSegmentPartitionableOperatorStateHandle, TaskOwnedDir: "t", SharedDir: "s", Empty: 1, Delegate: &EmptySegmentFileStateHandle{}}},
						ManagedKeyedState: &IncrementalKeyedStateHandle{Tag: TagIncrementalKeyGroupsHandleV2, CheckpointID: 3, BackendID: "04a3a5d4-a924-4335-8040-076d8b0cb5f1",
							StartKeyGroup: 86, NumKeyGroups: 42, CheckpointedSize: 11819,
							MetaData:      &RelativeFileStateHandle{RelativePath: "meta", StateSize: 505},
							SharedFiles:   []HandleAndLocalPath{{LocalPath: "000010.sst", Handle: seg}},
							PrivateFiles:  []HandleAndLocalPath{{LocalPath: "CURRENT", Handle: &ByteStreamStateHandle{Name: "c", Data: []byte("MANIFEST-4\n")}}},
							StateHandleID: "id"},
						RefMarker: 7, // any value other than 1 means absent
					}},
				},
			},
			{ID: OperatorIDFromUID("sink"), Parallelism: 1, MaxParallelism: 1, FullyFinished: true},
		},
		Trailer: mustHex(templateA),
	}
}

func TestWriteExoticRoundTrip(t *testing.T) {
	m := exoticMetadata()
	b := encode(t, m)
	m2, err := ReadBytes(b)
	if err != nil {
		t.Fatalf("ReadBytes: %v", err)
	}
	if b2 := encode(t, m2); !bytes.Equal(b, b2) {
		t.Fatalf("re-encoding differs at byte %d", firstDiff(b, b2))
	}
	if !equalExported(reflect.ValueOf(m), reflect.ValueOf(m2)) {
		t.Fatalf("decoded model differs from the written one")
	}
	l, err := ReadLayout(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("ReadLayout: %v", err)
	}
	if l.Size != int64(len(b)) || l.Version != 7 || l.Properties == nil || l.Properties.SharingStrategy != "FORWARD_BACKWARD" {
		t.Errorf("layout header: %+v", l)
	}
	op := l.Operators[0]
	if op.CoordinatorState == nil || op.CoordinatorState.Size != 10 || op.FullyFinished {
		t.Errorf("operator 0: %+v", op)
	}
	s0 := op.Subtasks[0]
	if s0.RefCheckpointID != 2 || op.Subtasks[2].RefCheckpointID != -1 || !op.Subtasks[1].Finished {
		t.Errorf("refCheckpointId / finished: %d %d %v", s0.RefCheckpointID, op.Subtasks[2].RefCheckpointID, op.Subtasks[1].Finished)
	}
	h := s0.ManagedOperatorState
	if h == nil || !h.FileMerging || h.Stream.Kind != StreamSegment || h.Stream.Size != 100 || h.Stream.SegmentStart != 4096 {
		t.Fatalf("managed operator state: %+v", h)
	}
	wantStates := []struct {
		elements, bytes int64
		runs            []SizeRun
	}{
		{3, 30, []SizeRun{{10, 3}}},
		{2, 20, nil},
		{1, 40, nil},
	}
	for i, w := range wantStates {
		st := h.States[i]
		if st.Elements != w.elements || st.Bytes != w.bytes || !reflect.DeepEqual(st.Sizes.Runs(), w.runs) || st.SizesApproximate {
			t.Errorf("state %q: %d elements, %d bytes, runs %v, approx %v; want %+v", st.Name, st.Elements, st.Bytes, st.Sizes.Runs(), st.SizesApproximate, w)
		}
	}
	if s0.RawOperatorState != nil {
		t.Errorf("raw operator state with a null handle should be nil in the layout")
	}
	k := s0.ManagedKeyedState
	if k.Kind != ChangelogHandle || len(k.Nested) != 3 || k.CheckpointedSize != 999 {
		t.Fatalf("changelog: %+v", k)
	}
	if kg := k.Nested[0]; !reflect.DeepEqual(kg.KeyGroupBytes.AppendTo(nil), []int64{0, 50, 0, 50}) || kg.InlineBytes != 200 {
		t.Errorf("key-group bytes %v inline %d", kg.KeyGroupBytes, kg.InlineBytes)
	}
	if mem := k.Nested[1]; mem.Kind != ChangelogBytesHandle || mem.StateSize != 5 || mem.InlineBytes != 5 {
		t.Errorf("in-memory changelog: %+v", mem)
	}
	if k.StateSize != 200+5+100 {
		t.Errorf("changelog state size %d", k.StateSize)
	}
	if in, out := s0.InputChannels(), s0.OutputChannels(); len(in) != 3 || len(out) != 2 || !in[2].Merged || in[2].Size != 20 || in[2].Info1 != 1 {
		t.Errorf("channels: %+v / %+v", in, out)
	}
	inc := op.Subtasks[2].ManagedKeyedState
	if inc.Kind != IncrementalHandle || inc.SharedFiles.Bytes != 100 || inc.PrivateFiles.InlineBytes != 11 || inc.StateSize != 505+100+11 {
		t.Errorf("incremental: %+v", inc)
	}
	if e := op.Subtasks[2].ManagedOperatorState; e == nil || !e.Empty || e.Stream.Kind != StreamEmptySegment {
		t.Errorf("empty file-merging handle: %+v", e)
	}
	if !l.Operators[1].FullyFinished {
		t.Errorf("operator 1 not fully finished")
	}
}

// equalExported compares two values by their exported fields only (the reader keeps unexported
// bookkeeping such as offset summaries that a hand-built model lacks). Nil and empty slices are
// equal.
func equalExported(a, b reflect.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		if a.Kind() == reflect.Interface && a.Elem().Type() != b.Elem().Type() {
			return false
		}
		return equalExported(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if a.Type().Field(i).IsExported() && !equalExported(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		for i := 0; i < a.Len(); i++ {
			if !equalExported(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Array:
		for i := 0; i < a.Len(); i++ {
			if !equalExported(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	}
	return a.Interface() == b.Interface()
}

// TestWriteVersions writes the same content in every writable version and reads it back.
func TestWriteVersions(t *testing.T) {
	ex, err := os.ReadFile(filepath.Join(fixturesDir, "v3-worked-example.metadata"))
	for v := int32(2); v <= 7; v++ {
		m := &Metadata{Version: v, CheckpointID: 7, Operators: []OperatorState{{
			ID: mustID("0123456789abcdeffedcba9876543210"), Parallelism: 1, MaxParallelism: 128, ChainLength: 1,
			Subtasks: []SubtaskEntry{{Index: 0, State: &SubtaskState{
				Duration: -1,
				ManagedOperatorState: OperatorStateSlot{Present: 1, Handle: &OperatorStateHandle{Tag: TagPartitionableOperatorStateHandle,
					States:   []StateEntry{{Name: "buffer", Mode: SplitDistribute, Offsets: []int64{100, 108, 116}}},
					Delegate: &FileStateHandle{Path: "file:/cp/chk-7/s1", StateSize: 124}}},
			}}},
		}}}
		if v < 4 {
			m.Trailing = []byte{}
		}
		b := encode(t, m)
		if err == nil && v >= 3 {
			// Spec §8: v4 = v3 + trailer; v5 and v6 insert two empty strings (name, uid) at 0x18.
			want := bytes.Clone(ex)
			want[7] = byte(v)
			if v >= 5 {
				want = append(want[:0x18:0x18], append([]byte{0, 0, 0, 0}, ex[0x18:]...)...)
			}
			if v == 7 {
				want = append(want, 0) // refCheckpointId marker: absent
			}
			if v >= 4 {
				want = append(want, nullTrailer...)
			}
			if !bytes.Equal(b, want) {
				t.Errorf("version %d differs from the worked example at byte %d", v, firstDiff(b, want))
			}
		}
		if v >= 4 && !bytes.HasSuffix(b, nullTrailer) {
			t.Errorf("version %d: no null trailer", v)
		}
		l, err := ReadLayout(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		st := l.Operators[0].Subtasks[0].ManagedOperatorState.States[0]
		if st.Elements != 3 || st.Bytes != 24 || st.Sizes.At(2) != 8 {
			t.Errorf("version %d: state %+v", v, st)
		}
		if v >= 4 && (l.Properties != nil || l.PropertiesError != "" || l.TrailerSize != 5) {
			t.Errorf("version %d: null trailer gave %+v %q", v, l.Properties, l.PropertiesError)
		}
	}
}

func mustID(s string) OperatorID {
	id, err := ParseOperatorID(s)
	if err != nil {
		panic(err)
	}
	return id
}

func TestWriteRejects(t *testing.T) {
	long := strings.Repeat("x", 65536)
	for name, m := range map[string]*Metadata{
		"version 1":        {Version: 1},
		"version 8":        {Version: 8},
		"long state name":  {Version: 3, Operators: []OperatorState{{Parallelism: 1, MaxParallelism: 1, Subtasks: []SubtaskEntry{{State: &SubtaskState{ManagedOperatorState: OperatorStateSlot{Handle: &OperatorStateHandle{States: []StateEntry{{Name: long}}}}}}}}}},
		"long uid":         {Version: 5, Operators: []OperatorState{{UID: long}}},
		"long master name": {Version: 2, MasterStates: []MasterState{{Name: long}}},
		"key groups":       {Version: 3, Operators: []OperatorState{{Parallelism: 1, MaxParallelism: 1, Subtasks: []SubtaskEntry{{State: &SubtaskState{ManagedKeyedState: &KeyGroupsStateHandle{Tag: 12, NumKeyGroups: 2}}}}}}},
		"merged in v5":     {Version: 5, Operators: []OperatorState{{Parallelism: 1, MaxParallelism: 1, Subtasks: []SubtaskEntry{{State: &SubtaskState{InputChannels: []ChannelStateHandle{{Tag: TagMergedInputChannelHandle}}}}}}}},
		"tag 17 delegate":  {Version: 6, Operators: []OperatorState{{Parallelism: 1, MaxParallelism: 1, Subtasks: []SubtaskEntry{{State: &SubtaskState{ManagedOperatorState: OperatorStateSlot{Handle: &OperatorStateHandle{Tag: 17, Delegate: &FileStateHandle{}}}}}}}}},
	} {
		if err := Write(&bytes.Buffer{}, m); err == nil {
			t.Errorf("%s: Write succeeded", name)
		}
	}
}

// TestWriteUntaggedChannels writes channel state in the untagged form of formats 3 to 5.
func TestWriteUntaggedChannels(t *testing.T) {
	for _, v := range []int32{3, 4, 5} {
		m := exoticMetadata()
		m.Version = v
		st := m.Operators[0].Subtasks[0].State
		st.InputChannels = st.InputChannels[:1]
		st.OutputChannels = st.OutputChannels[:1]
		st.InputChannels[0].Tag, st.OutputChannels[0].Tag = 0, 0
		st.RefMarker, st.RefCheckpointID = 0, 0
		m.Operators[0].Subtasks[2].State.RefMarker = 0
		if v < 5 {
			m.Operators[0].Name, m.Operators[0].UID = "", ""
		}
		if v < 4 {
			m.Trailer = nil
		}
		b := encode(t, m)
		m2, err := ReadBytes(b)
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		if !equalExported(reflect.ValueOf(m), reflect.ValueOf(m2)) {
			t.Errorf("version %d: decoded model differs from the written one", v)
		}
		l, err := ReadLayout(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		ch := l.Operators[0].Subtasks[0].OutputChannels()
		if len(ch) != 1 || ch[0].Merged || ch[0].Size != 8 || ch[0].Stream.Path != "s3://b/chk-3/channel" {
			t.Errorf("version %d: output channels %+v", v, ch)
		}
	}
}
