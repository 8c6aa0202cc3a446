package report

import (
	"bytes"
	"strings"
	"testing"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

func TestOperatorLabels(t *testing.T) {
	const id = "4b204d51cb71ba88d79b347eb5034174"
	for _, tt := range []struct {
		name                 string
		op                   opRef
		label, column, where string
	}{
		{"named", opRef{name: "Flat Map", uid: "flat", id: id, short: "4b204d51", position: 2},
			"#2 Flat Map (uid flat)", "#2 Flat Map (uid flat)", "operator #2 Flat Map (uid flat, " + id + ")"},
		{"name is the uid", opRef{name: "flat", uid: "flat", id: id, short: "4b204d51", position: 2},
			"#2 flat", "#2 flat", "operator #2 flat (" + id + ")"},
		{"uid only", opRef{uid: "flat", id: id, short: "4b204d51", position: 2},
			"#2 uid flat", "#2 uid flat", "operator #2 uid flat (" + id + ")"},
		{"named, not in the checkpoint", opRef{name: "Flat Map", id: id, short: "4b204d51"},
			"Flat Map", "Flat Map", "operator Flat Map (" + id + ")"},
		{"unnamed (format 1-4)", opRef{id: id, short: "4b204d51", position: 2},
			"operator #2 (4b204d51)", "operator #2", "operator #2 (" + id + ")"},
		{"unnamed, longer short ID", opRef{id: id, short: "4b204d51cb7", position: 12},
			"operator #12 (4b204d51cb7)", "operator #12", "operator #12 (" + id + ")"},
		{"older server without short_id", opRef{id: id, position: 3},
			"operator #3 (4b204d51)", "operator #3", "operator #3 (" + id + ")"},
		{"not in the checkpoint", opRef{id: id, short: "4b204d51"},
			"operator 4b204d51", "operator 4b204d51", "operator " + id},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.op.label(); got != tt.label {
				t.Errorf("label = %q, want %q", got, tt.label)
			}
			if got := tt.op.column(); got != tt.column {
				t.Errorf("column = %q, want %q", got, tt.column)
			}
			if got := findingWhere(&pb.Finding{OperatorId: id}, tt.op); got != tt.where {
				t.Errorf("findingWhere = %q, want %q", got, tt.where)
			}
		})
	}
}

func TestSubtasksText(t *testing.T) {
	for _, tt := range []struct {
		idx  []int32
		want string
	}{
		{nil, "none"}, {[]int32{3}, "new subtask 3"}, {[]int32{0, 1, 2, 3, 7}, "new subtasks 0-3, 7"},
	} {
		if got := subtasksText(tt.idx); got != tt.want {
			t.Errorf("subtasksText(%v) = %q, want %q", tt.idx, got, tt.want)
		}
	}
}

// TestUnnamedOperatorsNeverShowTheIDTwice: a report on operators without names or uids names
// them by position and short ID in every part of the text and Markdown reports.
func TestUnnamedOperatorsNeverShowTheIDTwice(t *testing.T) {
	const a, b = "4b204d51cb71ba88d79b347eb5034174", "4b204d51cb7aaaaaaaaaaaaaaaaaaaaa"
	r := &pb.RescaleReport{
		Verdict:    pb.Verdict_VERDICT_DENY,
		Checkpoint: &pb.CheckpointSummary{FormatVersion: 4, OperatorCount: 1, Source: "x"},
		Findings: []*pb.Finding{{RuleId: "PF110", Title: "t", Severity: pb.Severity_SEVERITY_ERROR, OperatorId: a, VertexId: a,
			AffectedSubtasks: []int32{128}}},
		SafeParallelism: []*pb.SafeParallelism{{VertexId: a, VertexName: a, Requested: 129, Below: 128}},
		Operators: []*pb.OperatorAssignment{
			{OperatorId: a, Position: 2, ShortId: "4b204d51cb71", OldParallelism: 4, NewParallelism: 129, MaxParallelism: 128,
				Subtasks: []*pb.SubtaskAssignment{{Index: 0, StateBytes: 10, BytesBefore: 10}}},
			{OperatorId: b, Position: 1, ShortId: "4b204d51cb7a", OldParallelism: 4, NewParallelism: 4, MaxParallelism: 128},
		},
	}
	var text, md bytes.Buffer
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"operator #2  4b204d51cb71", "operator #1  4b204d51cb7a", // table: position beside the short ID
		"operator #2 (" + a + "), new subtask 128",  // finding
		"operator #2 (4b204d51cb71): requested 129", // safe parallelism
		"STATE PER SUBTASK: operator #2 (4b204d51cb71)",
		"0 B, 1 operator\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	for _, want := range []string{"| operator #2 (4b204d51cb71) | - | 128 |", "| operator #2 (4b204d51cb71) | 129 | 128 | none |", "| operator #2 | `" + a + "` |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String()} {
		for _, line := range strings.Split(out, "\n") {
			if strings.Count(line, a[:8]) > 1 {
				t.Errorf("%s repeats the ID in %q", name, line)
			}
		}
	}
}
