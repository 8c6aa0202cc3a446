package checkpoint

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"testing/iotest"
)

// readLayoutBytes decodes a Layout from bytes in memory without copying them: the zero-copy
// decoder a Decoder runs on small files, which the tests compare with the streamed one
// (ReadLayout) and the model (ReadBytes).
func readLayoutBytes(b []byte) (*Layout, error) {
	return readLayout(newBytesDecoder(b))
}

func workedExample(t testing.TB) []byte {
	t.Helper()
	return fixture(t, "v3-worked-example.metadata")
}

// fixture returns the bytes of a file in fixturesDir; the test is skipped when the fixtures are
// not available.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixturesDir, name))
	if err != nil {
		t.Skipf("fixtures not available (%v)", err)
	}
	return b
}

// fixtureLayout decodes a file in fixturesDir (skipped as fixture is).
func fixtureLayout(t testing.TB, name string) *Layout {
	t.Helper()
	l, err := readLayoutBytes(fixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestReadWorkedExample(t *testing.T) {
	b := workedExample(t)
	// Read through a one-byte reader to exercise buffer refills.
	l, err := ReadLayout(iotest.OneByteReader(bytes.NewReader(b)))
	if err != nil {
		t.Fatal(err)
	}
	op := l.Operators[0]
	if op.ID.String() != "0123456789abcdeffedcba9876543210" || op.Parallelism != 1 || op.MaxParallelism != 128 || op.Offset != 0x18 {
		t.Errorf("operator %+v", op)
	}
	h := op.Subtasks[0].ManagedOperatorState
	st := h.States[0]
	if h.Stream.Kind != StreamFile || h.Stream.Size != 124 || h.Stream.Path != "file:/cp/chk-7/s1" ||
		st.Name != "buffer" || st.Mode != SplitDistribute || st.Elements != 3 || st.Bytes != 24 || st.Sizes.Len() != 3 {
		t.Errorf("state %+v in %+v", st, h)
	}
	if l.Size != 145 {
		t.Errorf("size %d", l.Size)
	}
}

func TestReadKafkaSourceSizes(t *testing.T) {
	l := fixtureLayout(t, "v4-kafka-source-native-stop-savepoint.metadata")
	for _, op := range l.Operators {
		if op.ID.String() != "cb16aa5adb311e8ac72482def19accbe" {
			continue
		}
		st := op.Subtasks[0].ManagedOperatorState.States[0]
		if st.Name != "SourceReaderState" || st.Elements != 3 || st.Bytes != 117 || st.Sizes.At(0) != 39 {
			t.Errorf("SourceReaderState: %+v", st)
		}
		if !op.Subtasks[0].ManagedOperatorState.Stream.Inline() {
			t.Errorf("stream not inline")
		}
		return
	}
	t.Error("Kafka source operator not found")
}

func TestStateSizesInterleaved(t *testing.T) {
	got := finishStates([]StateEntry{
		{Name: "a", Mode: SplitDistribute, sum: summarizeOffsets([]int64{10, 30}, SplitDistribute)},
		{Name: "b", Mode: SplitDistribute, sum: summarizeOffsets([]int64{20, 40}, SplitDistribute)},
		{Name: "c", Mode: SplitDistribute, sum: summarizeOffsets([]int64{50}, SplitDistribute)},
		{Name: "empty", Mode: Union},
		{Name: "down", Mode: SplitDistribute, sum: summarizeOffsets([]int64{90, 80}, SplitDistribute)},
	}, 100, nil)
	if !got[0].SizesApproximate || !got[1].SizesApproximate || got[2].SizesApproximate || got[3].SizesApproximate || !got[4].SizesApproximate {
		t.Errorf("approximate flags: %+v", got)
	}
	if got[2].Bytes != 40 || got[3].Elements != 0 || got[3].Bytes != 0 {
		t.Errorf("sizes: %+v", got)
	}
}

func TestReadErrors(t *testing.T) {
	ex := workedExample(t)
	patch := func(off int, bs ...byte) []byte {
		b := bytes.Clone(ex)
		copy(b[off:], bs)
		return b
	}
	for _, tc := range []struct {
		name   string
		in     []byte
		offset int64
		field  string
		msg    string
	}{
		{"empty", nil, 0, "magic", "unexpected end"},
		{"java", []byte{0xAC, 0xED, 0, 5, 0x70}, 0, "magic", "Flink 1.0"},
		{"magic", patch(0, 1, 2, 3, 4), 0, "magic", "wrong magic"},
		{"v0", patch(4, 0, 0, 0, 0), 4, "version", "unsupported legacy format v0"},
		{"v9", patch(4, 0, 0, 0, 9), 4, "version", "unknown format version"},
		{"negative checkpoint", patch(8, 0xFF), 8, "checkpointId", "negative checkpoint ID"},
		{"operator count", patch(0x14, 0x10), 0x14, "operators", "operator count needs"},
		{"parallelism", patch(0x28, 0, 0, 1, 0), 0x28, "operators[0].parallelism", "not smaller or equal to max parallelism"},
		{"max parallelism above Flink's bound", patch(0x2c, 0, 0, 0x80, 1), 0x2c, "operators[0].maxParallelism", "outside 1..32768"},
		{"coordinator", patch(0x30, 2), 0x30, "operators[0].coordinatorState", "expected a ByteStreamStateHandle"},
		{"subtask index", patch(0x35, 0, 0, 0, 1), 0x35, "operators[0].subtasks[0]", "subtask index outside"},
		{"operator tag", patch(0x3D, 9), 0x3D, "operators[0].subtasks[0].managedOperatorState", "invalid operator state handle tag"},
		{"mode", patch(0x4A, 3), 0x4A, `operators[0].subtasks[0].managedOperatorState.states["buffer"].mode`, "distribution mode"},
		{"offsets", patch(0x4B, 0x7F), 0x4B, `operators[0].subtasks[0].managedOperatorState.states["buffer"].offsets`, "offset count needs"},
		{"negative offsets", patch(0x4B, 0xFF), 0x4B, `operators[0].subtasks[0].managedOperatorState.states["buffer"].offsets`, "negative offset count"},
		{"stream tag", patch(0x67, 5), 0x67, `operators[0].subtasks[0].managedOperatorState.delegate`, "unknown stream state handle tag"},
		{"utf", patch(0x44, 0xFF), 0x44, `operators[0].subtasks[0].managedOperatorState.states[0]`, "malformed modified UTF-8"},
		{"keyed tag", patch(0x87, 99), 0x87, `operators[0].subtasks[0].managedKeyedState`, "invalid keyed state handle tag"},
		{"truncated", ex[:0x60], 0x4B, `operators[0].subtasks[0].managedOperatorState.states["buffer"].offsets`, "offset count needs"},
		{"truncated string", ex[:0x49], 0x44, `operators[0].subtasks[0].managedOperatorState.states[0]`, "unexpected end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A stream of unknown length cannot check counts up front; it fails where the data ends.
			if _, err := ReadLayout(bytes.NewReader(tc.in)); !errors.As(err, new(*FormatError)) {
				t.Errorf("ReadLayout: error %v is not a *FormatError", err)
			}
			for _, read := range []func([]byte) error{
				func(b []byte) error { _, err := ReadBytes(b); return err },
				func(b []byte) error { _, err := readLayoutBytes(b); return err },
			} {
				err := read(tc.in)
				var fe *FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("error %v is not a *FormatError", err)
				}
				if fe.Offset != tc.offset || fe.Field != tc.field || !strings.Contains(fe.Msg, tc.msg) {
					t.Errorf("got offset %d field %q msg %q; want %d %q %q", fe.Offset, fe.Field, fe.Msg, tc.offset, tc.field, tc.msg)
				}
			}
		})
	}
}

func TestMasterStateErrors(t *testing.T) {
	base := &Metadata{Version: 3, MasterStates: []MasterState{{Version: 1, Name: "h", Payload: []byte{1, 2}}}}
	b := encode(t, base)
	// Header 16 bytes, count 4, then magic at 20, length at 24.
	for _, tc := range []struct {
		name string
		off  int
		bs   []byte
		msg  string
	}{
		{"magic", 20, []byte{0}, "master state magic"},
		{"zero length", 24, []byte{0, 0, 0, 0}, "zero or negative"},
		{"long", 24, []byte{0, 0, 0, 14}, "trailing bytes"},
		{"short", 24, []byte{0, 0, 0, 11}, "remain"},
		{"shorter", 24, []byte{0, 0, 0, 8}, "enclosing record"},
	} {
		c := bytes.Clone(b)
		c = append(c, 0, 0, 0, 0)
		copy(c[tc.off:], tc.bs)
		_, err := ReadBytes(c)
		var fe *FormatError
		if !errors.As(err, &fe) || !strings.Contains(fe.Msg, tc.msg) || !strings.HasPrefix(fe.Field, "masterStates[0]") {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// smallCorpus returns up to n corpus files of distinct versions and sizes, smallest first.
func smallCorpus(t testing.TB, n int) [][]byte {
	t.Helper()
	files := metadataCorpus(t)
	type f struct {
		b []byte
		v string
	}
	var all []f
	for _, cf := range files {
		if cf.version == "0" {
			continue
		}
		b, err := os.ReadFile(cf.path)
		if err == nil && len(b) < 64<<10 {
			all = append(all, f{b, cf.version})
		}
	}
	sort.Slice(all, func(i, j int) bool { return len(all[i].b) < len(all[j].b) })
	var out [][]byte
	perVersion := map[string]int{}
	for _, x := range all {
		if len(out) < n && perVersion[x.v] < (n+6)/7 {
			perVersion[x.v]++
			out = append(out, x.b)
		}
	}
	return out
}

func TestTruncation(t *testing.T) {
	files := smallCorpus(t, 24)
	var cuts int
	for _, b := range files {
		m, err := ReadBytes(b)
		if err != nil {
			t.Fatal(err)
		}
		// Every cut must fail: inside the body, and (format 4+) inside the properties trailer,
		// whose Java stream then ends early, as Flink's ObjectInputStream would find.
		end := len(b)
		if m.Version < 4 {
			end = len(b) - len(m.Trailing)
		}
		step := 1
		if testing.Short() {
			step = 7
		}
		for i := 0; i < end; i += step {
			cuts++
			_, err := ReadBytes(b[:i])
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Offset < 0 || fe.Offset > int64(i) {
				t.Fatalf("cut at %d of %d: %v", i, len(b), err)
			}
			if _, err := readLayoutBytes(b[:i]); err == nil {
				t.Fatalf("cut at %d of %d: ReadLayout succeeded", i, len(b))
			}
		}
	}
	t.Logf("%d files, %d truncations, all rejected with a *FormatError", len(files), cuts)
}

func TestBitFlips(t *testing.T) {
	files := smallCorpus(t, 24)
	rng := rand.New(rand.NewSource(1))
	var ok, failed int
	for i := 0; i < 1000; i++ {
		b := bytes.Clone(files[i%len(files)])
		for k := 0; k < 1+rng.Intn(3); k++ {
			p := rng.Intn(len(b))
			b[p] ^= 1 << rng.Intn(8)
		}
		m, err := ReadBytes(b)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("flip %d: error %T %v", i, err, err)
			}
			failed++
		} else {
			ok++
			if m.Version >= 2 {
				var buf bytes.Buffer
				if err := Write(&buf, m); err != nil {
					t.Fatalf("flip %d: Write: %v", i, err)
				}
			}
		}
		if _, err := readLayoutBytes(b); (err == nil) != (m != nil) {
			t.Fatalf("flip %d: ReadLayout and ReadBytes disagree: %v", i, err)
		}
	}
	t.Logf("1000 bit-flipped files: %d decoded, %d rejected", ok, failed)
}

func TestPropertiesErrorIsNotFatal(t *testing.T) {
	// A complete trailer Preflight cannot interpret is a warning: a future Flink may write
	// another class.
	m := &Metadata{Version: 4, CheckpointID: 1, Trailer: []byte("not java")}
	l, err := readLayoutBytes(encode(t, m))
	if err != nil || l.Properties != nil || !strings.Contains(l.PropertiesError, "not a Java serialization stream") || l.TrailerSize != 8 {
		t.Errorf("%v %+v", err, l)
	}
}

func TestTruncatedTrailerIsAnError(t *testing.T) {
	// Flink's ObjectInputStream hits end of file in these, so the restore fails: the file is
	// truncated, and the error names the byte where the stream ends.
	tests := []struct {
		name    string
		trailer []byte
		wantOff int64
		wantMsg string
	}{
		{"ends inside the stream", []byte{0xAC, 0xED, 0, 5, 0x73, 0x72, 0, 3, 'a', 'b'}, 24 + 8, "ends inside its Java serialization stream"},
		{"missing", []byte{}, 24, "missing CheckpointProperties trailer"},
		{"only the magic", []byte{0xAC}, 24, "ends inside its Java serialization stream"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := encode(t, &Metadata{Version: 4, CheckpointID: 1, Trailer: tt.trailer})
			for name, read := range map[string]func() error{
				"ReadLayout": func() error { _, err := ReadLayout(bytes.NewReader(b)); return err },
				"ReadBytes":  func() error { _, err := ReadBytes(b); return err },
			} {
				var fe *FormatError
				if err := read(); !errors.As(err, &fe) || fe.Offset != tt.wantOff || !strings.Contains(fe.Msg, tt.wantMsg) || fe.Field != "trailer" {
					t.Errorf("%s: %v, want a FormatError at %d (trailer) saying %q", name, err, tt.wantOff, tt.wantMsg)
				}
			}
		})
	}
}

func TestNestingDepthCapped(t *testing.T) {
	var h KeyedStateHandle = &KeyGroupsStateHandle{Tag: TagKeyGroupsHandleV2, Offsets: []int64{}}
	for range 100 {
		h = &ChangelogStateBackendHandle{Tag: TagChangelogHandleV2, Materialized: []KeyedStateHandle{h}}
	}
	m := &Metadata{Version: 3, Operators: []OperatorState{{Parallelism: 1, MaxParallelism: 1,
		Subtasks: []SubtaskEntry{{State: &SubtaskState{ManagedKeyedState: h}}}}}}
	_, err := ReadBytes(encode(t, m))
	var fe *FormatError
	if !errors.As(err, &fe) || !strings.Contains(fe.Msg, "nested deeper than 64") || !strings.HasPrefix(fe.Field, "operators[0].subtasks[0].managedKeyedState.materialized[0]") {
		t.Errorf("got %v", err)
	}
	// A stream handle nested in itself (tag 3 delegates) is capped too.
	var s StreamStateHandle = &FileStateHandle{Path: "f"}
	for range 100 {
		s = &KeyGroupsStateHandle{Tag: TagKeyGroupsHandle, Offsets: []int64{}, Delegate: s}
	}
	m.Operators[0].Subtasks[0].State.ManagedKeyedState = &KeyGroupsStateHandle{Tag: TagKeyGroupsHandleV2, Offsets: []int64{}, Delegate: s}
	if _, err := readLayoutBytes(encode(t, m)); !errors.As(err, &fe) || !strings.Contains(fe.Msg, "nested deeper") {
		t.Errorf("got %v", err)
	}
}

func TestReadLegacyFormats(t *testing.T) {
	l := fixtureLayout(t, "v1-flink1.2-nonKeyed-savepoint.metadata")
	op := l.Operators[0]
	if l.Version != 1 || op.ChainLength != 3 || len(op.Subtasks) != 4 || op.Subtasks[0].ManagedOperatorState == nil {
		t.Fatalf("format 1 layout: %+v", op)
	}
	var names []string
	for _, s := range op.Subtasks[0].ManagedOperatorState.States {
		names = append(names, s.Name)
	}
	if !slicesContain(names, "_default_") {
		t.Errorf("state names %v", names)
	}
	m, err := ReadBytes(fixture(t, "v2-flink1.3-memory-savepoint-with-legacy-state.metadata"))
	if err != nil {
		t.Fatal(err)
	}
	var legacy int
	for _, op := range m.Operators {
		for _, s := range op.Subtasks {
			legacy += len(s.State.Legacy)
		}
	}
	if legacy == 0 {
		t.Error("no legacy handles found in the Flink 1.3 file")
	}
}

func slicesContain(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestReadErrorIsWrapped(t *testing.T) {
	ex := workedExample(t)
	boom := errors.New("boom")
	for _, cut := range []int{0, 20, 100, len(ex)} {
		_, err := ReadLayout(&failingReader{data: ex[:cut], err: boom})
		var fe *FormatError
		if !errors.Is(err, boom) || !errors.As(err, &fe) || fe.Offset > int64(cut) || fe.Offset < int64(cut)-8 {
			t.Errorf("cut %d: %v", cut, err)
		}
	}
}

func TestRunBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 10 MB file")
	}
	// Sizes alternate 10, 11, 10, 11...: one run per element, more than the budget allows.
	n := runBudget + runBudget/4
	offs := make([]int64, n)
	var pos int64 = 100
	for i := range offs {
		offs[i] = pos
		pos += 10 + int64(i%2)
	}
	m := &Metadata{Version: 3, Operators: []OperatorState{{Parallelism: 1, MaxParallelism: 1, Subtasks: []SubtaskEntry{{State: &SubtaskState{
		ManagedOperatorState: OperatorStateSlot{Handle: &OperatorStateHandle{
			States:   []StateEntry{{Name: "files", Offsets: offs}},
			Delegate: &FileStateHandle{Path: "f", StateSize: pos}}}}}}}}}
	l, err := ReadLayout(bytes.NewReader(encode(t, m)))
	if err != nil {
		t.Fatal(err)
	}
	st := l.Operators[0].Subtasks[0].ManagedOperatorState.States[0]
	if st.Elements != int64(n) || st.Bytes != pos-100 || st.Sizes.Len() != int64(n) || st.Sizes.Total() != pos-100 || !st.SizesApproximate {
		t.Errorf("elements %d bytes %d len %d total %d approx %v", st.Elements, st.Bytes, st.Sizes.Len(), st.Sizes.Total(), st.SizesApproximate)
	}
	if r := len(st.Sizes.Runs()); r > runBudget+3 {
		t.Errorf("%d runs kept", r)
	}
	if st.Sizes.At(0) != 10 || st.Sizes.At(1) != 11 {
		t.Errorf("exact sizes lost before the budget: %d %d", st.Sizes.At(0), st.Sizes.At(1))
	}
}

func TestTooManyKeyGroups(t *testing.T) {
	offs := make([]int64, maxKeyGroups+1)
	m := &Metadata{Version: 3, Operators: []OperatorState{{Parallelism: 1, MaxParallelism: 1, Subtasks: []SubtaskEntry{{State: &SubtaskState{
		ManagedKeyedState: &KeyGroupsStateHandle{Tag: TagKeyGroupsHandleV2, NumKeyGroups: int32(len(offs)), Offsets: offs}}}}}}}
	_, err := ReadBytes(encode(t, m))
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Value != "32769" || fe.Field != "operators[0].subtasks[0].managedKeyedState" {
		t.Errorf("got %v", err)
	}
}

type stuckReader struct{}

func (stuckReader) Read([]byte) (int, error) { return 0, nil }

func TestStuckReader(t *testing.T) {
	_, err := ReadLayout(stuckReader{})
	if !errors.Is(err, io.ErrNoProgress) {
		t.Errorf("got %v", err)
	}
}

// TestHostileCountsDoNotAllocate checks that huge counts in a short stream of unknown length
// fail at the end of the input without allocating for the count.
func TestHostileCountsDoNotAllocate(t *testing.T) {
	ex := workedExample(t)
	for _, tc := range []struct {
		name string
		off  int
	}{
		{"operators", 0x14},
		{"subtasks", 0x31},
		{"states", 0x3E},
		{"offsets", 0x4B},
	} {
		b := bytes.Clone(ex[:0x90])
		copy(b[tc.off:], []byte{0x7F, 0xFF, 0xFF, 0xFF})
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := ReadLayout(onlyReader{bytes.NewReader(b)})
		runtime.ReadMemStats(&after)
		if !errors.As(err, new(*FormatError)) {
			t.Errorf("%s: %v", tc.name, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2<<20 {
			t.Errorf("%s: allocated %d bytes for a %d-byte input", tc.name, alloc, len(b))
		}
	}
}
