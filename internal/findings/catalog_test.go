package findings

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

func TestDefaultCatalogValid(t *testing.T) {
	cat := DefaultCatalog()
	if n := len(cat.Entries); n < 12 {
		t.Fatalf("catalog has %d entries, want >= 12", n)
	}
	seen := map[string]bool{}
	for _, e := range cat.Entries {
		if seen[e.ID] {
			t.Errorf("duplicate entry %s", e.ID)
		}
		seen[e.ID] = true
		if len(e.States) == 0 {
			t.Errorf("entry %s lists no states", e.ID)
		}
		for _, st := range e.States {
			switch st.Assumption {
			case OneUnguarded, ExactlyOne, AtMostOne, FirstOnly, OrderDependent:
				if st.Consequence == "" {
					t.Errorf("entry %s state %s (%s) says nothing about the consequence", e.ID, st.Name, st.Assumption)
				}
				if st.Remediation == "" && e.Remediation == "" {
					t.Errorf("entry %s state %s (%s) has no remediation", e.ID, st.Name, st.Assumption)
				}
			}
		}
		if len(e.References) == 0 {
			t.Errorf("entry %s has no references", e.ID)
		}
	}
	for _, b := range cat.Bugs {
		if len(b.References) == 0 || b.Summary == "" || b.Component == "" {
			t.Errorf("bug %s lacks references, summary or component", b.ID)
		}
	}
}

// opWith builds an operator layout with the given states (name -> mode) on p subtasks, one
// element each.
func opWith(id string, p, maxP int, states map[string]checkpoint.DistributionMode) *checkpoint.OperatorLayout {
	op := &checkpoint.OperatorLayout{Parallelism: p, MaxParallelism: maxP}
	op.ID = uidHash(id)
	for i := 0; i < p; i++ {
		h := &checkpoint.OperatorStateHandleLayout{Stream: checkpoint.StreamRef{Kind: checkpoint.StreamInline, Size: 100}}
		for _, name := range sortedKeys(states) {
			var sz checkpoint.ElementSizes
			sz.Append(10, 1)
			h.States = append(h.States, checkpoint.StateEntryLayout{Name: name, Mode: states[name], Elements: 1, Bytes: 10, Sizes: sz})
		}
		op.Subtasks = append(op.Subtasks, checkpoint.SubtaskLayout{Index: i, ManagedOperatorState: h})
	}
	return op
}

func sortedKeys(m map[string]checkpoint.DistributionMode) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := range ks {
		for j := i + 1; j < len(ks); j++ {
			if ks[j] < ks[i] {
				ks[i], ks[j] = ks[j], ks[i]
			}
		}
	}
	return ks
}

func TestIdentify(t *testing.T) {
	cat := DefaultCatalog()
	S, U := checkpoint.SplitDistribute, checkpoint.Union
	withCoord := func(op *checkpoint.OperatorLayout) *checkpoint.OperatorLayout {
		op.CoordinatorState = &checkpoint.CoordinatorStateRef{StreamRef: checkpoint.StreamRef{Kind: checkpoint.StreamInline, Size: 200}}
		return op
	}
	named := func(op *checkpoint.OperatorLayout, name, uid string) *checkpoint.OperatorLayout {
		op.Name, op.UID = name, uid
		return op
	}
	for _, tc := range []struct {
		name string
		op   *checkpoint.OperatorLayout
		want string
	}{
		{"expired-files", opWith("x1", 4, 128, map[string]checkpoint.DistributionMode{"expired-files": S}), "table-compact-operator"},
		{"files-state pinned", opWith("x2", 1, 1, map[string]checkpoint.DistributionMode{"files-state": S}), "table-compact-coordinator"},
		{"files-state not pinned", opWith("x3", 2, 128, map[string]checkpoint.DistributionMode{"files-state": S}), ""},
		{"proc-time committer", opWith("x4", 1, 1, map[string]checkpoint.DistributionMode{"pending-partitions-with-time": S}), "table-partition-committer-process-time"},
		{"writer", opWith("x5", 4, 128, map[string]checkpoint.DistributionMode{"bucket-states": S, "max-part-counter": U}), "streaming-file-writer"},
		{"kafka source with orphan", withCoord(opWith("x6", 2, 128, map[string]checkpoint.DistributionMode{"SourceReaderState": S, "topic-partition-offset-states": U})), "source-operator"},
		{"legacy consumer", opWith("x7", 2, 128, map[string]checkpoint.DistributionMode{"topic-partition-offset-states": U}), "flink-kafka-consumer"},
		{"producer", opWith("x8", 2, 128, map[string]checkpoint.DistributionMode{"next-transactional-id-hint-v2": U, "state": S}), "flink-kafka-producer"},
		{"uid only", opWith("compact-operator", 4, 128, nil), "table-compact-operator"},
		{"v5 uid suffix", named(opWith("y", 4, 128, nil), "compact-operator", "3_compact-operator"), "table-compact-operator"},
		{"file sink compactor coordinator by id", opWith("FileSinkCompactorCoordinator", 1, 128, nil), "file-sink-compactor-coordinator"},
		{"sink v2 writer", opWith("x9", 2, 128, map[string]checkpoint.DistributionMode{"writer_raw_states": S}), "sink-v2-writer"},
		{"unknown", opWith("x10", 2, 128, map[string]checkpoint.DistributionMode{"my-state": S}), ""},
		{"shared uid, partition-time states", opWith("partition-committer", 1, 1, map[string]checkpoint.DistributionMode{"pending-partitions": S, "checkpoint-id-to-watermark": S}), "table-partition-committer-partition-time"},
		{"shared uid, proc-time states", opWith("partition-committer", 1, 1, map[string]checkpoint.DistributionMode{"pending-partitions-with-time": S}), "table-partition-committer-process-time"},
		{"uid with foreign states", opWith("compact-operator", 4, 128, map[string]checkpoint.DistributionMode{"writer_raw_states": S}), "sink-v2-writer"},
		{"uid-only entry beats fingerprint", named(opWith("z", 2, 128, map[string]checkpoint.DistributionMode{"writer_raw_states": S}), "Sink: KafkaSink Writer", "sink"), "kafka-sink-writer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if e := Identify(tc.op, cat); e != nil {
				got = e.ID
			}
			if got != tc.want {
				t.Errorf("Identify = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLoadCatalogUserEntries(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.json")
	user := `{"entries": [{"id": "my-op", "name": "My operator", "fingerprint": {"uids": ["my-op"]},
	  "states": [{"name": "x", "mode": "SPLIT_DISTRIBUTE", "assumption": "ONE-UNGUARDED", "consequence": "x must not be empty"}]},
	  {"id": "sink-v2-writer", "name": "overridden", "fingerprint": {"states": [{"name": "writer_raw_states"}]},
	  "states": [{"name": "writer_raw_states", "assumption": "ONE-UNGUARDED"}]}]}`
	if err := os.WriteFile(path, []byte(user), 0o644); err != nil {
		t.Fatal(err)
	}
	cat, err := LoadCatalog(path)
	if err != nil {
		t.Fatal(err)
	}
	if e := Identify(opWith("my-op", 2, 128, map[string]checkpoint.DistributionMode{"x": checkpoint.SplitDistribute}), cat); e == nil || e.ID != "my-op" || !e.User {
		t.Errorf("user entry not identified: %+v", e)
	}
	if e := cat.Entry("sink-v2-writer"); e == nil || e.Name != "overridden" {
		t.Errorf("user entry did not replace the built-in one: %+v", e)
	}
	if len(cat.Entries) != len(DefaultCatalog().Entries)+1 {
		t.Errorf("merged catalog has %d entries", len(cat.Entries))
	}
	for _, bad := range []string{
		`{"entries": [{"id": "a", "fingerprint": {"uids": ["a"]}, "states": [{"name": "x", "assumption": "SOMETIMES"}]}]}`,
		`{"entries": [{"id": "a", "fingerprint": {}, "states": []}]}`,
		`{"entries": [{"id": "a", "fingerprint": {"uids": ["a"]}, "states": [{"name": "x", "assumption": "MERGE-ALL", "bug": "NOPE-1"}]}]}`,
		`{"entries": [], "unknown_field": 1}`,
	} {
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadCatalog(path); err == nil {
			t.Errorf("LoadCatalog(%s): want error", bad)
		}
	}
	if _, err := LoadCatalog(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file: want error")
	}
}

// Clone gives a catalog that MergeJSON extends and overrides without changing the original,
// which an engine shares between requests.
func TestCatalogCloneLeavesOriginal(t *testing.T) {
	orig := DefaultCatalog()
	n, bugs := len(orig.Entries), len(orig.Bugs)
	name := orig.Entry("sink-v2-writer").Name
	c, err := orig.Clone()
	if err != nil {
		t.Fatal(err)
	}
	user := `{"entries": [{"id": "my-op", "name": "My operator", "fingerprint": {"uids": ["my-op"]},
	  "states": [{"name": "x", "mode": "SPLIT_DISTRIBUTE", "assumption": "ONE-UNGUARDED"}]},
	  {"id": "sink-v2-writer", "name": "overridden", "fingerprint": {"states": [{"name": "writer_raw_states"}]},
	  "states": [{"name": "writer_raw_states", "assumption": "ONE-UNGUARDED"}]}]}`
	if err := c.MergeJSON([]byte(user), "user.json"); err != nil {
		t.Fatal(err)
	}
	if c.Entry("my-op") == nil || c.Entry("sink-v2-writer").Name != "overridden" {
		t.Fatalf("the clone did not take the user entries")
	}
	if len(orig.Entries) != n || len(orig.Bugs) != bugs || orig.Entry("my-op") != nil || orig.Entry("sink-v2-writer").Name != name {
		t.Fatalf("merging into the clone changed the original")
	}
	op := opWith("my-op", 2, 128, map[string]checkpoint.DistributionMode{"x": checkpoint.SplitDistribute})
	if Identify(op, orig) != nil || Identify(op, c) == nil {
		t.Fatalf("identification: the original must not know my-op, the clone must")
	}
}
