package lifecycle

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/checkpoint/checkpointtest"
	"github.com/flinkpreflight/preflight/internal/report"
	"github.com/flinkpreflight/preflight/internal/scenarios"
)

func layoutOf(t *testing.T, m *checkpoint.Metadata) *checkpoint.Layout {
	t.Helper()
	return checkpointtest.Layout(t, m)
}

func findingIDs(fs []Finding) string {
	var ids []string
	for _, f := range fs {
		ids = append(ids, f.Severity+" "+f.ID)
	}
	return strings.Join(ids, ",")
}

func TestDiffFindings(t *testing.T) {
	series := scenarios.KafkaOrphanUnionSeries()
	small := layoutOf(t, series[1].Build())
	next := layoutOf(t, series[2].Build())
	pruned, _, err := Prune(series[2].Build(), Selector{Operator: "kafka-source", State: "topic-partition-offset-states"}, PruneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prunedL := layoutOf(t, pruned)
	// Union grown ×2 only: growth, but not the parallelism signature.
	half := series[1].Build()
	half.Operators = nil
	doubled := scenarios.KafkaOrphanUnionMetadata(series[1].PerSubtask * 2)
	tests := []struct {
		name     string
		old, new *checkpoint.Layout
		opts     DiffOptions
		want     string
	}{
		{"restore multiplies union by P", small, next, DiffOptions{}, "WARNING LC301,WARNING LC303"},
		{"frame already exceeded", small, next, DiffOptions{FrameSize: 8 << 10}, "ERROR LC303,WARNING LC301"},
		{"union ×2 is growth, not the signature", small, layoutOf(t, doubled), DiffOptions{}, "INFO LC301,INFO LC303"},
		{"identical", next, next, DiffOptions{}, ""},
		{"pruned", next, prunedL, DiffOptions{}, ""},
		{"operator not in the job", next, next, DiffOptions{JobOperators: []string{"archive-sink"}}, "WARNING LC302"},
		{"operator dropped", next, layoutOf(t, half), DiffOptions{}, "INFO LC304"},
		{"format change is not growth", small, withFormat(small, 6, small.Size*11/10), DiffOptions{}, ""},
		{"format change past the frame", small, withFormat(small, 6, 16<<20), DiffOptions{}, "ERROR LC303"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Diff(tt.old, tt.new, "old", "new", tt.opts)
			if got := findingIDs(d.Findings); got != tt.want {
				t.Errorf("findings %q, want %q", got, tt.want)
			}
		})
	}
}

// withFormat is l as if written in another format version, with another _metadata size.
func withFormat(l *checkpoint.Layout, version int, size int64) *checkpoint.Layout {
	c := *l
	c.Version, c.Size = version, size
	return &c
}

// TestDiffFormatChangeText: the text names both format versions, and keyed state's element
// count (which _metadata does not record) is unknown, not 0.
func TestDiffFormatChangeText(t *testing.T) {
	l := layoutOf(t, scenarios.KafkaOrphanUnionSeries()[1].Build())
	l.Operators[0].Subtasks[0].ManagedKeyedState = &checkpoint.KeyedStateHandleLayout{Kind: checkpoint.KeyGroupsHandle, StateSize: 3000}
	var b bytes.Buffer
	if err := WriteDiff(&b, report.Text, Diff(l, withFormat(l, 6, l.Size+300), "old", "new", DiffOptions{})); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"format v5 (Flink 2.0) → v6 (Flink 2.1+): the format changed", "keyed        unchanged  ·                 unknown", "coordinator  unchanged  ·                 ·", "No growth signature"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("diff text lacks %q:\n%s", want, b.String())
		}
	}
}

func TestDiffStates(t *testing.T) {
	series := scenarios.KafkaOrphanUnionSeries()
	old := layoutOf(t, series[0].Build())
	pruned, _, err := Prune(series[0].Build(), Selector{Operator: "kafka-source", State: "topic-partition-offset-states"}, PruneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := Diff(old, layoutOf(t, pruned), "a", "b", DiffOptions{})
	if len(d.Operators) != 2 || d.Operators[0].UID != "kafka-source" || d.Operators[0].Change != Changed || d.Operators[1].Change != Unchanged {
		t.Fatalf("operators %+v", d.Operators)
	}
	var union *StateDiff
	for i := range d.Operators[0].States {
		if d.Operators[0].States[i].Name == "topic-partition-offset-states" {
			union = &d.Operators[0].States[i]
		}
	}
	if union == nil || union.Change != Removed || union.OldElements != 64 || union.OldMode != "UNION" || union.NewElements != 0 {
		t.Fatalf("union diff %+v", union)
	}
	if d.New.Size >= d.Old.Size {
		t.Errorf("size %d → %d", d.Old.Size, d.New.Size)
	}
}

func TestDiffKeyGroupsAndParallelism(t *testing.T) {
	m := checkpointtest.Metadata(t, filepath.Join("..", "..", "testdata", "max-parallelism", "_metadata"))
	l := layoutOf(t, m)
	d := Diff(l, l, "a", "a", DiffOptions{})
	found := false
	for _, op := range d.Operators {
		if op.OldKeyGroups > 0 {
			found = true
			if op.OldKeyGroups != op.OldMaxParallelism || op.NewKeyGroups != op.OldKeyGroups {
				t.Errorf("%s: key groups %d/%d", op.ID, op.OldKeyGroups, op.OldMaxParallelism)
			}
		}
		if op.Change != Unchanged {
			t.Errorf("%s: %s", op.ID, op.Change)
		}
	}
	if !found {
		t.Fatal("no keyed operator in max-parallelism scenario")
	}
}

func TestWriteDiffFormats(t *testing.T) {
	series := scenarios.KafkaOrphanUnionSeries()
	d := Diff(layoutOf(t, series[0].Build()), layoutOf(t, series[1].Build()), "old", "new", DiffOptions{})
	for _, f := range []report.Format{report.Text, report.Markdown, report.JSON} {
		var b bytes.Buffer
		if err := WriteDiff(&b, f, d); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, "topic-partition-offset-states") || !strings.Contains(out, "LC301") {
			t.Errorf("%s output lacks the union state or LC301:\n%s", f, out)
		}
		if f == report.JSON {
			var back DiffResult
			if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Operators) != 2 {
				t.Errorf("json: %v", err)
			}
		}
		if f == report.Text && !strings.Contains(out, "64 → 256 (×4.00)") {
			t.Errorf("text lacks the ×4 growth:\n%s", out)
		}
	}
}
