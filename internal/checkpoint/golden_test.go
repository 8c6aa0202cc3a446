package checkpoint

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// expectedFile mirrors the entries of the fixtures' expected.json.
type expectedFile struct {
	File              string `json:"file"`
	Size              int    `json:"size"`
	Version           int32  `json:"version"`
	CheckpointID      int64  `json:"checkpointId"`
	ByteExactReencode *bool  `json:"byteExactReencode"`
	TrailerBytes      *int   `json:"trailerBytes"`
	MasterStates      []struct {
		Version    int32  `json:"version"`
		Name       string `json:"name"`
		PayloadLen int    `json:"payloadLen"`
	} `json:"masterStates"`
	Operators []struct {
		OperatorID            string  `json:"operatorId"`
		Name                  string  `json:"name"`
		UID                   string  `json:"uid"`
		Parallelism           int32   `json:"parallelism"`
		MaxParallelism        int32   `json:"maxParallelism"`
		ChainLength           *int32  `json:"chainLength"`
		SubtaskEntries        int     `json:"subtaskEntries"`
		FullyFinished         bool    `json:"fullyFinished"`
		CoordinatorStateBytes *int64  `json:"coordinatorStateBytes"`
		CoordinatorHandleName *string `json:"coordinatorHandleName"`
	} `json:"operators"`
	Tasks []struct {
		JobVertexID    string `json:"jobVertexId"`
		Parallelism    int32  `json:"parallelism"`
		MaxParallelism int32  `json:"maxParallelism"`
		ChainLength    int32  `json:"chainLength"`
		Subtasks       int    `json:"subtasks"`
	} `json:"tasks"`
	HandleTagCounts      map[string]int `json:"handleTagCounts"`
	CheckpointProperties *struct {
		DiscardCancelled bool `json:"discardCancelled"`
		DiscardFailed    bool `json:"discardFailed"`
		DiscardFinished  bool `json:"discardFinished"`
		DiscardSubsumed  bool `json:"discardSubsumed"`
		DiscardSuspended bool `json:"discardSuspended"`
		Forced           bool `json:"forced"`
		Unclaimed        bool `json:"unclaimed"`
		CheckpointType   struct {
			Class                string `json:"class"`
			Name                 string `json:"name"`
			SharingFilesStrategy string `json:"sharingFilesStrategy"`
			FormatType           string `json:"formatType"`
			PostCheckpointAction string `json:"postCheckpointAction"`
		} `json:"checkpointType"`
	} `json:"checkpointProperties"`
}

func loadExpected(t testing.TB) []expectedFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixturesDir, "expected.json"))
	if err != nil {
		t.Skipf("fixtures not available (%v); they live at %s", err, fixturesDir)
	}
	var out []expectedFile
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFixturesGolden(t *testing.T) {
	for _, want := range loadExpected(t) {
		t.Run(want.File, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(fixturesDir, want.File))
			if err != nil {
				t.Fatal(err)
			}
			if len(b) != want.Size {
				t.Errorf("size %d, want %d", len(b), want.Size)
			}
			m, err := ReadBytes(b)
			if err != nil {
				t.Fatal(err)
			}
			if m.Version != want.Version || m.CheckpointID != want.CheckpointID {
				t.Errorf("version/checkpoint %d/%d, want %d/%d", m.Version, m.CheckpointID, want.Version, want.CheckpointID)
			}
			if len(m.MasterStates) != len(want.MasterStates) {
				t.Errorf("%d master states, want %d", len(m.MasterStates), len(want.MasterStates))
			} else {
				for i, ws := range want.MasterStates {
					ms := m.MasterStates[i]
					if ms.Version != ws.Version || ms.Name != ws.Name || len(ms.Payload) != ws.PayloadLen {
						t.Errorf("master state %d = %d/%q/%d, want %+v", i, ms.Version, ms.Name, len(ms.Payload), ws)
					}
				}
			}
			checkOperators(t, m, &want)
			if want.HandleTagCounts != nil {
				got := handleTagCounts(m)
				if !maps.Equal(got, want.HandleTagCounts) {
					t.Errorf("handle tag counts %v, want %v", got, want.HandleTagCounts)
				}
			}
			if want.TrailerBytes != nil && len(m.Trailer) != *want.TrailerBytes {
				t.Errorf("trailer %d bytes, want %d", len(m.Trailer), *want.TrailerBytes)
			}
			p, err := m.Properties()
			if err != nil {
				t.Errorf("properties: %v", err)
			}
			if wp := want.CheckpointProperties; wp == nil {
				if p != nil {
					t.Errorf("properties %+v, want none", p)
				}
			} else {
				ct := wp.CheckpointType
				exp := CheckpointProperties{
					Forced: wp.Forced, Unclaimed: wp.Unclaimed, DiscardSubsumed: wp.DiscardSubsumed,
					DiscardFinished: wp.DiscardFinished, DiscardCancelled: wp.DiscardCancelled,
					DiscardFailed: wp.DiscardFailed, DiscardSuspended: wp.DiscardSuspended,
					Savepoint: ct.Class == savepointTypeName, Name: ct.Name, SavepointFormat: ct.FormatType,
					SharingStrategy: ct.SharingFilesStrategy, PostCheckpointAct: ct.PostCheckpointAction,
				}
				if p == nil || *p != exp {
					t.Errorf("properties %+v, want %+v", p, exp)
				}
			}
			l, err := ReadLayout(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if (l.Properties == nil) != (want.CheckpointProperties == nil) || l.PropertiesError != "" {
				t.Errorf("layout properties %+v (error %q)", l.Properties, l.PropertiesError)
			}
			if want.TrailerBytes != nil && l.TrailerSize != *want.TrailerBytes {
				t.Errorf("layout trailer %d bytes, want %d", l.TrailerSize, *want.TrailerBytes)
			}
			if want.ByteExactReencode != nil && *want.ByteExactReencode {
				var buf bytes.Buffer
				if err := Write(&buf, m); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(buf.Bytes(), b) {
					t.Errorf("re-encoding differs at byte %d", firstDiff(buf.Bytes(), b))
				}
			}
		})
	}
}

func checkOperators(t *testing.T, m *Metadata, want *expectedFile) {
	t.Helper()
	if m.Version == 1 {
		if len(m.Tasks) != len(want.Tasks) {
			t.Fatalf("%d tasks, want %d", len(m.Tasks), len(want.Tasks))
		}
		for i, wt := range want.Tasks {
			tk := m.Tasks[i]
			if tk.JobVertexID.String() != wt.JobVertexID || tk.Parallelism != wt.Parallelism || tk.MaxParallelism != wt.MaxParallelism || tk.ChainLength != wt.ChainLength || len(tk.Subtasks) != wt.Subtasks {
				t.Errorf("task %d = %v/%d/%d/%d/%d, want %+v", i, tk.JobVertexID, tk.Parallelism, tk.MaxParallelism, tk.ChainLength, len(tk.Subtasks), wt)
			}
		}
		return
	}
	if len(m.Operators) != len(want.Operators) {
		t.Fatalf("%d operators, want %d", len(m.Operators), len(want.Operators))
	}
	for i, wo := range want.Operators {
		op := &m.Operators[i]
		if op.ID.String() != wo.OperatorID || op.Name != wo.Name || op.UID != wo.UID || op.Parallelism != wo.Parallelism || op.MaxParallelism != wo.MaxParallelism || len(op.Subtasks) != wo.SubtaskEntries || op.FullyFinished != wo.FullyFinished {
			t.Errorf("operator %d = %v %q %q p=%d max=%d subtasks=%d finished=%v, want %+v", i, op.ID, op.Name, op.UID, op.Parallelism, op.MaxParallelism, len(op.Subtasks), op.FullyFinished, wo)
		}
		if wo.ChainLength != nil && op.ChainLength != *wo.ChainLength {
			t.Errorf("operator %d chain length %d, want %d", i, op.ChainLength, *wo.ChainLength)
		}
		if wo.CoordinatorStateBytes != nil {
			if op.CoordinatorState == nil || op.CoordinatorState.Size() != *wo.CoordinatorStateBytes || op.CoordinatorState.Name != *wo.CoordinatorHandleName {
				t.Errorf("operator %d coordinator state %+v, want %d bytes named %q", i, op.CoordinatorState, *wo.CoordinatorStateBytes, *wo.CoordinatorHandleName)
			}
		} else if op.CoordinatorState != nil {
			t.Errorf("operator %d has coordinator state, want none", i)
		}
	}
}

// handleTagCounts counts the non-null handles of m by space and tag, the way expected.json does:
// "stream:N", "keyed:N", "operator:N", "coordinator" and "channel-in|out:v1|v2:N". Format-2 legacy
// handles and channel-state delegates are not counted.
func handleTagCounts(m *Metadata) map[string]int {
	c := map[string]int{}
	var stream func(h StreamStateHandle)
	var keyed func(h KeyedStateHandle)
	stream = func(h StreamStateHandle) {
		if h == nil {
			return
		}
		c["stream:"+strconv.Itoa(int(h.streamTag()))]++
		if kg, ok := h.(*KeyGroupsStateHandle); ok {
			stream(kg.Delegate)
		}
	}
	keyed = func(h KeyedStateHandle) {
		if h == nil {
			return
		}
		c["keyed:"+strconv.Itoa(int(h.keyedTag()))]++
		switch h := h.(type) {
		case *KeyGroupsStateHandle:
			stream(h.Delegate)
		case *IncrementalKeyedStateHandle:
			stream(h.MetaData)
			for _, f := range h.SharedFiles {
				stream(f.Handle)
			}
			for _, f := range h.PrivateFiles {
				stream(f.Handle)
			}
		case *ChangelogStateBackendHandle:
			for _, n := range h.Materialized {
				keyed(n)
			}
			for _, n := range h.NonMaterialized {
				keyed(n)
			}
		case *ChangelogStateHandleStreamImpl:
			for _, s := range h.Handles {
				stream(s.Handle)
			}
		}
	}
	operator := func(s OperatorStateSlot) {
		if s.Handle == nil {
			return
		}
		c["operator:"+strconv.Itoa(int(s.Handle.Tag))]++
		stream(s.Handle.Delegate)
	}
	channels := func(dir string, hs []ChannelStateHandle) {
		for _, h := range hs {
			kind := "v1"
			if h.Tag != 0 {
				kind = "v2:" + strconv.Itoa(int(h.Tag))
			}
			c["channel-"+dir+":"+kind]++
		}
	}
	for _, op := range m.Operators {
		if op.CoordinatorState != nil {
			c["coordinator"]++
		}
		for _, e := range op.Subtasks {
			if s := e.State; s != nil {
				operator(s.ManagedOperatorState)
				operator(s.RawOperatorState)
				keyed(s.ManagedKeyedState)
				keyed(s.RawKeyedState)
				channels("in", s.InputChannels)
				channels("out", s.OutputChannels)
			}
		}
	}
	return c
}
