package report

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/engine"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// TestTextChartBothSides: the per-subtask chart names the operator whose subtasks it draws and has
// a row for every old and every new subtask, scaling down and up.
func TestTextChartBothSides(t *testing.T) {
	meta, err := os.ReadFile(filepath.Join("..", "..", "testdata", "compact-sink", "_metadata"))
	if err != nil {
		t.Skipf("example checkpoint not generated: %v", err)
	}
	tests := []struct {
		name     string
		newP     int
		wantRows []string // regexps, in order
		notWant  string
	}{
		{"down 4→2", 2, []string{
			`STATE PER SUBTASK: #6 compact-operator \(0d9ffb4f\), parallelism 4 → 2`,
			`\n +0 +█+ +217 B  →  █+ +434 B\n`,
			`\n +1 .*434 B\n`,
			`\n +2 +█+ +217 B  →  +\(removed\)\n`,
			`\n +3 +█+ +217 B  →  +\(removed\)\n`,
		}, ""},
		{"up 4→8", 8, []string{
			`STATE PER SUBTASK: #6 compact-operator \(0d9ffb4f\), parallelism 4 → 8`,
			`\n +3 +█+ +217 B  →  █+ +217 B\n`,
			`\n +4 +\(new\)  → +0 B  ← empty\n`,
			`\n +7 +\(new\)  → +0 B  ← empty\n`,
		}, "(removed)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := engine.New().Check(context.Background(), engine.Request{Input: engine.Input{Reader: bytes.NewReader(meta), Source: "compact-sink"},
				Plan: &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": int32(tt.newP)}}, Options: &pb.CheckOptions{IncludeSubtasks: true}})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := WriteText(&out, rep); err != nil {
				t.Fatal(err)
			}
			text := out.String()
			chart := text[strings.Index(text, "STATE PER SUBTASK"):]
			at := 0
			for _, re := range tt.wantRows {
				loc := regexp.MustCompile(re).FindStringIndex(chart[at:])
				if loc == nil {
					t.Fatalf("chart lacks %q after offset %d:\n%s", re, at, chart)
				}
				at += loc[0]
			}
			if tt.notWant != "" && strings.Contains(chart, tt.notWant) {
				t.Errorf("chart has %q:\n%s", tt.notWant, chart)
			}
		})
	}
}

// TestTextChartOperatorItClaims: the chart's title and rows belong to the same operator, also when
// the finding names an operator other than the one with the most state.
func TestTextChartOperatorItClaims(t *testing.T) {
	sub := func(i int32, after, before int64) *pb.SubtaskAssignment {
		return &pb.SubtaskAssignment{Index: i, StateBytes: after, Elements: 1, BytesBefore: before}
	}
	big := &pb.OperatorAssignment{OperatorId: "aa", Name: "big-one", OldParallelism: 2, NewParallelism: 2,
		States:   []*pb.StateAssignment{{Name: "s"}},
		Subtasks: []*pb.SubtaskAssignment{sub(0, 9000, 9000), sub(1, 9000, 9000)}}
	small := &pb.OperatorAssignment{OperatorId: "bb", Name: "small-one", OldParallelism: 2, NewParallelism: 3,
		States:      []*pb.StateAssignment{{Name: "t"}},
		Subtasks:    []*pb.SubtaskAssignment{sub(0, 10, 10), sub(1, 10, 10), sub(2, 0, -1)},
		OldSubtasks: []*pb.OldSubtaskState{{Index: 0, Bytes: 10}, {Index: 1, Bytes: 10}}}
	for _, tt := range []struct {
		name     string
		findings []*pb.Finding
		want     string
	}{
		{"finding names small-one", []*pb.Finding{{RuleId: "PF101", Severity: pb.Severity_SEVERITY_ERROR, OperatorId: "bb"}}, "small-one (bb), parallelism 2 → 3"},
		{"no finding: the rescaled operator", nil, "small-one (bb), parallelism 2 → 3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			w := bufio.NewWriter(&b)
			writeCharts(w, &pb.RescaleReport{Findings: tt.findings, Operators: []*pb.OperatorAssignment{big, small}})
			w.Flush()
			if !strings.Contains(b.String(), tt.want) || strings.Contains(b.String(), "big-one") || !strings.Contains(b.String(), "10 B") {
				t.Fatalf("chart:\n%s\nwant only %q with its own rows", b.String(), tt.want)
			}
		})
	}
}
