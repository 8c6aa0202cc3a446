package engine

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

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
	a, b := released.GetOperators()[0].GetStates(), kept.GetOperators()[0].GetStates()
	if len(a) != n || len(b) != n {
		t.Fatalf("%d and %d states, want %d", len(a), len(b), n)
	}
	for i := range a {
		if !proto.Equal(a[i], b[i]) {
			t.Fatalf("state %d: released %v, kept %v", i, a[i], b[i])
		}
	}
}
