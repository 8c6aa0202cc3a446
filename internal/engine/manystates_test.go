package engine

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/checkpoint/checkpointtest"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/report"
	"github.com/flinkpreflight/preflight/internal/scenarios"
	"github.com/flinkpreflight/preflight/internal/units"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// BenchmarkManyStates runs what `preflight check FILE -p P [-o json]` runs in-process on one
// operator, one subtask and N SPLIT_DISTRIBUTE list states of two elements each (issue 29):
// -p 4 leaves two new subtasks without an element of every state (PF170 for each), -p 2 at
// 300k names exceeds the RPC frame size, so the nearest-safe search runs. It reports the
// file size, the peak heap during the check and the report's line count.
//
//	go test ./internal/engine -run '^$' -bench ManyStates -benchtime 1x
func BenchmarkManyStates(b *testing.B) {
	cases := []struct {
		names int
		p     int32
		json  bool
	}{
		{30_000, 4, false},
		{30_000, 4, true},
		{30_000, 2, false},
		{300_000, 4, false},
		{300_000, 4, true},
		{300_000, 2, false},
	}
	for _, c := range cases {
		name := "names-" + strconv.Itoa(c.names/1000) + "k/p" + strconv.Itoa(int(c.p))
		if c.json {
			name += "/json"
		}
		b.Run(name, func(b *testing.B) {
			path := scaleFile(b, "names-"+strconv.Itoa(c.names), scenarios.Synthetic{Operators: 1, Parallelism: 1, Split: c.names, Elements: 2})
			eng := New()
			plan := &pb.RescalePlan{DefaultParallelism: c.p}
			var lines int
			benchCheckFile(b, path, func() error {
				var out countingWriter
				err := checkFile(eng, path, plan, c.json, &out)
				lines = out.lines
				return err
			})
			b.ReportMetric(float64(lines), "report-lines")
		})
	}
}

// checkFile is the CLI's in-process check: the streaming text report, or the whole report as JSON.
func checkFile(eng *Engine, path string, plan *pb.RescalePlan, asJSON bool, w io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	in := Input{Reader: f, Source: path, Size: st.Size()} // as the CLI opens a local file
	if asJSON {
		rep, err := eng.Check(context.Background(), Request{Input: in, Plan: plan, Options: &pb.CheckOptions{}})
		if err != nil {
			return err
		}
		return report.WriteJSON(w, rep)
	}
	var table report.OperatorTable
	rep, err := eng.Check(context.Background(), Request{Input: in, Plan: plan, Options: &pb.CheckOptions{}, Detail: SubtasksForChart, Each: table.Add})
	if err != nil {
		return err
	}
	return report.WriteTextTable(w, rep, &table)
}

// countingWriter counts the lines written to it and drops the bytes.
type countingWriter struct{ lines int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.lines += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

// TestManyStatesReportStaysShort: on issue 29's checkpoint (one operator, N SPLIT_DISTRIBUTE
// names of two elements, checked at -p 4 so that every name leaves new subtasks empty) the text
// report stays under 100 lines, one PF170 finding covers every name, and the JSON lists them
// all. Short mode checks 30,000 names, the full run the 300,000.
func TestManyStatesReportStaysShort(t *testing.T) {
	n := 300_000
	if testing.Short() {
		n = 30_000
	}
	path := filepath.Join(t.TempDir(), "_metadata")
	spec := scenarios.Synthetic{Operators: 1, Parallelism: 1, Split: n, Elements: 2}
	if err := scenarios.WriteFile(path, false, func(w io.Writer) error { return scenarios.WriteSynthetic(w, spec) }); err != nil {
		t.Fatal(err)
	}
	eng, plan := New(), &pb.RescalePlan{DefaultParallelism: 4}
	var text bytes.Buffer
	if err := checkFile(eng, path, plan, false, &text); err != nil {
		t.Fatal(err)
	}
	if lines := bytes.Count(text.Bytes(), []byte{'\n'}); lines > 100 {
		t.Errorf("text report of %d names has %d lines, want at most 100", n, lines)
	}
	if want := units.Thousands(int64(n)) + " states (-o json lists them all)"; !bytes.Contains(text.Bytes(), []byte(want)) {
		t.Errorf("text report lacks %q:\n%s", want, text.String())
	}
	var js bytes.Buffer
	if err := checkFile(eng, path, plan, true, &js); err != nil {
		t.Fatal(err)
	}
	var rep pb.RescaleReport
	if err := protojson.Unmarshal(js.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	var pf170 []*pb.Finding
	for _, f := range rep.GetFindings() {
		if f.GetRuleId() == "PF170" {
			pf170 = append(pf170, f)
		}
	}
	if len(pf170) != 1 || len(pf170[0].GetStateNames()) != n || len(rep.GetOperators()) != 1 || len(rep.GetOperators()[0].GetStates()) != n {
		t.Fatalf("JSON has %d PF170 findings (want 1 listing %d names) and %d operators", len(pf170), n, len(rep.GetOperators()))
	}
	seen := make(map[string]bool, n)
	for _, name := range pf170[0].GetStateNames() {
		seen[name] = true
	}
	for i := range n {
		if name := "split-" + strconv.Itoa(i); !seen[name] {
			t.Fatalf("state_names lacks %s", name)
		}
	}
}

// TestReleasedStatesMatch: the API report converts an operator of more than releaseChunk states
// a chunk at a time and releases each state (releaseStates); its states must be those of the
// report that keeps them (with subtasks, which reads them again).
func TestReleasedStatesMatch(t *testing.T) {
	n := 2*releaseChunk + 7
	path := filepath.Join(t.TempDir(), "_metadata")
	spec := scenarios.Synthetic{Operators: 1, Parallelism: 3, Split: n, Elements: 2}
	if err := scenarios.WriteFile(path, false, func(w io.Writer) error { return scenarios.WriteSynthetic(w, spec) }); err != nil {
		t.Fatal(err)
	}
	check := func(include bool) *pb.RescaleReport {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rep, err := New().Check(context.Background(), Request{Input: Input{Reader: f, Source: path}, Plan: &pb.RescalePlan{DefaultParallelism: 5},
			Options: &pb.CheckOptions{IncludeSubtasks: include}})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	released, kept := check(false), check(true)
	// In pieces (StatesInPieces): parts of at most releaseChunk states, joined as they come.
	var joined *pb.OperatorAssignment
	parts := 0
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = New().Check(context.Background(), Request{Input: Input{Reader: f, Source: path}, Plan: &pb.RescalePlan{DefaultParallelism: 5},
		Options: &pb.CheckOptions{}, StatesInPieces: true, Pieces: func(op *pb.OperatorAssignment, continued bool) error {
			parts++
			if len(op.GetStates()) > releaseChunk {
				t.Errorf("a part of %d states", len(op.GetStates()))
			}
			if continued {
				joined.States = append(joined.States, op.GetStates()...)
			} else {
				joined = op
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if parts != 3 {
		t.Errorf("%d parts, want 3", parts)
	}
	a, b, c := released.GetOperators()[0].GetStates(), kept.GetOperators()[0].GetStates(), joined.GetStates()
	if len(a) != n || len(b) != n || len(c) != n {
		t.Fatalf("%d, %d and %d states, want %d", len(a), len(b), len(c), n)
	}
	for i := range a {
		if !proto.Equal(a[i], b[i]) || !proto.Equal(c[i], b[i]) {
			t.Fatalf("state %d: released %v, in pieces %v, kept %v", i, a[i], c[i], b[i])
		}
	}
	joined.States = nil
	if want := proto.Clone(released.GetOperators()[0]).(*pb.OperatorAssignment); !proto.Equal(joined, func() *pb.OperatorAssignment { want.States = nil; return want }()) {
		t.Errorf("in pieces %v, want %v", joined, want)
	}
}

// TestManyOperatorsOneFinding: when one rule fires for the same cause on many operators (PF170 on
// N unknown operators with one SPLIT_DISTRIBUTE element each, at -p 2), the report has one
// finding naming the first few and listing every operator in operator_ids, in report order,
// whatever the ranges the check is cut into; the text report stays short. With MergedOperators
// operators or fewer, each keeps its own finding.
func TestManyOperatorsOneFinding(t *testing.T) {
	defer func(n int) { rangeOperators = n }(rangeOperators)
	for _, n := range []int{findings.MergedOperators, findings.MergedOperators + 1, 5_000} {
		path := filepath.Join(t.TempDir(), "_metadata")
		spec := scenarios.Synthetic{Operators: n, Parallelism: 1, Split: 1}
		if err := scenarios.WriteFile(path, false, func(w io.Writer) error { return scenarios.WriteSynthetic(w, spec) }); err != nil {
			t.Fatal(err)
		}
		l := checkpointtest.File(t, path)
		var reports []*pb.RescaleReport
		for _, ranges := range []int{1, 7, 1 << 30} {
			rangeOperators = ranges
			rep, err := New().check(context.Background(), checkRun{layout: l, source: path, opts: &pb.CheckOptions{}, detail: SubtasksAsAsked}, &pb.RescalePlan{DefaultParallelism: 2})
			if err != nil {
				t.Fatal(err)
			}
			reports = append(reports, rep)
		}
		if !proto.Equal(reports[0], reports[1]) || !proto.Equal(reports[0], reports[2]) {
			t.Fatalf("%d operators: the reports differ by range size", n)
		}
		rep := reports[0]
		var pf170 []*pb.Finding
		for _, f := range rep.GetFindings() {
			if f.GetRuleId() == "PF170" {
				pf170 = append(pf170, f)
			}
		}
		if n <= findings.MergedOperators {
			if len(pf170) != n || len(pf170[0].GetOperatorIds()) != 0 {
				t.Fatalf("%d operators: %d PF170 findings (want one each, none merged)", n, len(pf170))
			}
			continue
		}
		if len(pf170) != 1 || len(pf170[0].GetOperatorIds()) != n {
			t.Fatalf("%d operators: %d PF170 findings, want one listing %d operators", n, len(pf170), n)
		}
		f := pf170[0]
		for i, id := range f.GetOperatorIds() {
			if want := rep.GetOperators()[i].GetOperatorId(); id != want {
				t.Fatalf("operator_ids[%d] = %s, want %s (report order)", i, id, want)
			}
		}
		if f.GetOperatorId() != f.GetOperatorIds()[0] || f.GetOperatorPosition() != 1 || !slices.Equal(f.GetAffectedSubtasks(), []int32{1}) {
			t.Errorf("merged finding: operator %s at %d, subtasks %v; want the first operator's, at 1, subtask 1", f.GetOperatorId(), f.GetOperatorPosition(), f.GetAffectedSubtasks())
		}
		var text bytes.Buffer
		if err := report.WriteText(&text, rep); err != nil {
			t.Fatal(err)
		}
		if lines := bytes.Count(text.Bytes(), []byte{'\n'}); lines > 100 {
			t.Errorf("%d operators: text report of %d lines, want at most 100", n, lines)
		}
		if want := "and " + units.Thousands(int64(n-1)) + " more (-o json lists them all)"; !bytes.Contains(text.Bytes(), []byte(want)) {
			t.Errorf("%d operators: text report lacks %q:\n%s", n, want, text.String())
		}
	}
}
