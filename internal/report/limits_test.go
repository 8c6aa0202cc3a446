package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// longReport has n operators, each with one INFO finding, and one ERROR finding over many states.
func longReport(n int) *pb.RescaleReport {
	r := &pb.RescaleReport{Verdict: pb.Verdict_VERDICT_DENY, Checkpoint: &pb.CheckpointSummary{FormatVersion: 5, Source: "x/_metadata"}}
	names := []string{"a", "b", "c"}
	r.Findings = append(r.Findings, &pb.Finding{RuleId: "PF101", Title: "empty", Severity: pb.Severity_SEVERITY_ERROR,
		OperatorId: fmt.Sprintf("%032x", 0), StateName: "a", StateNames: names, Message: "many states"})
	for i := range n {
		id := fmt.Sprintf("%032x", i)
		r.Operators = append(r.Operators, &pb.OperatorAssignment{OperatorId: id, Name: fmt.Sprintf("op-%d", i), OldParallelism: 1, NewParallelism: 2})
		r.Findings = append(r.Findings, &pb.Finding{RuleId: "PF170", Title: "info", Severity: pb.Severity_SEVERITY_INFO, OperatorId: id, StateName: "s", Message: "one state"})
	}
	return r
}

// TestLongReportsAreBounded: text and Markdown show the first findings and operators and say
// what they left out; NoLimits shows everything.
func TestLongReportsAreBounded(t *testing.T) {
	r := longReport(1500)
	writers := map[string]func(*bytes.Buffer, Limits) error{
		"text":     func(b *bytes.Buffer, lim Limits) error { return WriteTextLimited(b, r, nil, lim) },
		"markdown": func(b *bytes.Buffer, lim Limits) error { return WriteMarkdownLimited(b, r, lim) },
		"table": func(b *bytes.Buffer, lim Limits) error {
			var table OperatorTable
			for _, op := range r.Operators {
				table.Add(op)
			}
			return WriteTextLimited(b, r, &table, lim)
		},
		"markdown table": func(b *bytes.Buffer, lim Limits) error {
			var table OperatorTable
			for _, op := range r.Operators {
				table.Add(op)
			}
			return WriteMarkdownTable(b, r, &table, lim)
		},
	}
	for name, write := range writers {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := write(&b, DefaultLimits); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if lines := strings.Count(out, "\n"); lines > 100 {
				t.Errorf("%d lines for 1500 operators and 1501 findings, want at most 100:\n%s", lines, out)
			}
			for _, want := range []string{"… and 1,491 more findings (1,491 INFO): --full shows them, -o json lists them all",
				"… and 1,480 more operators: --full shows them, -o json lists them all", "op-19", "many states"} {
				if !strings.Contains(out, want) {
					t.Errorf("lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "op-20 ") || strings.Contains(out, "op-20 |") {
				t.Errorf("shows operator op-20 past the limit:\n%s", out)
			}
			b.Reset()
			if err := write(&b, NoLimits); err != nil {
				t.Fatal(err)
			}
			if out := b.String(); !strings.Contains(out, "op-1499") || strings.Contains(out, "more findings") || strings.Contains(out, "more operators") {
				t.Errorf("NoLimits leaves something out")
			}
		})
	}
}

func TestFindingStates(t *testing.T) {
	for _, tc := range []struct {
		f           *pb.Finding
		where, cell string
	}{
		{&pb.Finding{}, "", ""},
		{&pb.Finding{StateName: "x"}, "state x", "x"},
		{&pb.Finding{StateName: "a", StateNames: make([]string, 30_000)}, "30,000 states (-o json lists them all)", " and 29,999 more"},
	} {
		if got := statesWhere(tc.f); got != tc.where {
			t.Errorf("statesWhere = %q, want %q", got, tc.where)
		}
		if got := statesCellOf(tc.f); got != tc.cell {
			t.Errorf("statesCellOf = %q, want %q", got, tc.cell)
		}
	}
}

// TestOperatorTableKeep: a table that keeps only the rows the limits show writes what the table
// of every row writes.
func TestOperatorTableKeep(t *testing.T) {
	r := longReport(1500)
	for _, keep := range []int{DefaultLimits.Operators, DefaultLimits.Operators + 3} {
		var all, kept bytes.Buffer
		tables := []*OperatorTable{{}, {Keep: keep}}
		for _, table := range tables {
			for _, op := range r.Operators {
				table.Add(op)
			}
		}
		if err := WriteTextLimited(&all, r, tables[0], DefaultLimits); err != nil {
			t.Fatal(err)
		}
		if err := WriteTextLimited(&kept, r, tables[1], DefaultLimits); err != nil {
			t.Fatal(err)
		}
		if len(tables[1].blocks) != 1 || tables[1].Len() != 1500 || all.String() != kept.String() {
			t.Errorf("keep %d: %d blocks, %d rows; the text differs:\n%s\nwant\n%s", keep, len(tables[1].blocks), tables[1].Len(), kept.String(), all.String())
		}
		// Markdown from the kept table is Markdown from the report's messages.
		var fromMessages, fromTable bytes.Buffer
		if err := WriteMarkdownLimited(&fromMessages, r, DefaultLimits); err != nil {
			t.Fatal(err)
		}
		if err := WriteMarkdownTable(&fromTable, r, tables[1], DefaultLimits); err != nil {
			t.Fatal(err)
		}
		if fromMessages.String() != fromTable.String() {
			t.Errorf("keep %d: Markdown from the table differs:\n%s\nwant\n%s", keep, fromTable.String(), fromMessages.String())
		}
	}
}
