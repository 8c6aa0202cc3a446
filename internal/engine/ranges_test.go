package engine

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/checkpoint/checkpointtest"
	corpustest "github.com/flinkpreflight/preflight/internal/corpus"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/report"
	"github.com/flinkpreflight/preflight/internal/rescale"
	"github.com/flinkpreflight/preflight/internal/scenarios"
	"github.com/flinkpreflight/preflight/internal/scenarios/scenariotest"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

func testdataLayouts(t *testing.T) map[string]*checkpoint.Layout {
	out := map[string]*checkpoint.Layout{}
	for _, name := range []string{"compact-sink", "kafka-orphan-union", "max-parallelism"} {
		l, err := checkpoint.ReadLayout(bytes.NewReader(readTestdata(t, name)))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = l
	}
	return out
}

// corpusLayouts are the corpus's decodable files; it skips t when the corpus is absent.
func corpusLayouts(t *testing.T) map[string]*checkpoint.Layout {
	files := corpustest.Metadata(t)
	if testing.Short() && len(files) > 60 {
		files = files[:60]
	}
	out := map[string]*checkpoint.Layout{}
	for f, l := range checkpointtest.Decodable(files) {
		out[f] = l
	}
	return out
}

// TestRangesMatchWholeJob: the report of a check simulated one vertex at a time equals the one
// of a check in one range and the one of the whole job simulated and judged at once
// (checkWholeJob), in both subtask details, without and with the JobManager-memory rule (which
// makes the check pass over the ranges twice).
func TestRangesMatchWholeJob(t *testing.T) { rangesMatchWholeJob(t, testdataLayouts(t)) }

// TestRangesMatchWholeJobOnCorpus is TestRangesMatchWholeJob on the corpus (skipped without it).
func TestRangesMatchWholeJobOnCorpus(t *testing.T) { rangesMatchWholeJob(t, corpusLayouts(t)) }

func rangesMatchWholeJob(t *testing.T, layouts map[string]*checkpoint.Layout) {
	defer func(n int) { rangeOperators = n }(rangeOperators)
	e := New()
	ctx := context.Background()
	compared, jobManager := 0, 0
	for name, l := range layouts {
		twice := map[string]int32{}
		for _, op := range l.Operators {
			if op.Parallelism > 0 {
				twice[op.ID.String()] = int32(min(2*op.Parallelism, 32768))
			}
		}
		for _, plan := range []*pb.RescalePlan{{}, {DefaultParallelism: 1}, {VertexParallelism: twice}} {
			for _, detail := range []SubtaskDetail{SubtasksAsAsked, SubtasksForChart} {
				for _, jm := range []int64{0, 4 << 10, 1 << 62} {
					opts := &pb.CheckOptions{IncludeSubtasks: true, RpcFrameSizeBytes: 64 << 10, JobmanagerMemoryBytes: jm}
					check := func(ranges int) *pb.RescaleReport {
						rangeOperators = ranges
						rep, err := e.check(ctx, checkRun{layout: l, source: name, opts: opts, detail: detail}, plan)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						return rep
					}
					one, byVertex := check(1<<30), check(1)
					whole, err := checkWholeJob(e, ctx, l, name, plan, opts, detail)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if !proto.Equal(one, byVertex) || !proto.Equal(one, whole) {
						t.Fatalf("%s, plan %v, detail %d, JobManager memory %d: reports differ\none range: %v\nby vertex: %v\nwhole job: %v", name, plan, detail, jm, prototext.Format(one), prototext.Format(byVertex), prototext.Format(whole))
					}
					compared++
					for _, f := range one.Findings {
						if f.RuleId == "PF121" {
							jobManager++
							break
						}
					}
				}
			}
		}
	}
	t.Logf("%d reports compared, %d with a JobManager-memory finding", compared, jobManager)
	if jobManager == 0 {
		t.Error("no report has a JobManager-memory finding: the second pass is not compared")
	}
}

// checkWholeJob is e.check with the whole job simulated and judged at once
// (findings.CheckContext), the reference for the checks by ranges.
func checkWholeJob(e *Engine, ctx context.Context, layout *checkpoint.Layout, source string, p *pb.RescalePlan, opts *pb.CheckOptions, detail SubtaskDetail) (*pb.RescaleReport, error) {
	plan := toRescalePlan(p, opts)
	result, err := rescale.SimulateContext(ctx, layout, plan)
	if err != nil {
		return nil, err
	}
	rep, err := findings.CheckContext(ctx, layout, plan, result, e.catalog, findingsOptions(opts))
	if err != nil {
		return nil, err
	}
	b := &reportBuilder{detail: detail, include: opts.GetIncludeSubtasks(), out: &pb.RescaleReport{Checkpoint: summary(layout, source)}}
	b.setShortIDs(resultOperators(result))
	b.add(result, rep.Findings) // every finding comes with the one range
	rep.Findings = nil
	b.finish(rep)
	return b.out, nil
}

// resultOperators yields the IDs of a Result's operators in report order.
func resultOperators(r *rescale.Result) iter.Seq[checkpoint.OperatorID] {
	return func(yield func(checkpoint.OperatorID) bool) {
		for _, v := range r.Vertices {
			for _, op := range v.Operators {
				if !yield(op.ID) {
					return
				}
			}
		}
	}
}

// TestStreamTextMatches: the text of a streamed check (Request.Each with
// report.OperatorTable) is byte for byte that of the check that keeps every operator, with
// ranges of one vertex and of the whole job.
func TestStreamTextMatches(t *testing.T) {
	layouts := testdataLayouts(t)
	_, layouts["synthetic 5000 operators"] = scenariotest.SyntheticLayout(t, scenarios.SyntheticOperators(5000))
	streamTextMatches(t, layouts)
}

// TestStreamTextMatchesOnCorpus is TestStreamTextMatches on the corpus (skipped without it).
func TestStreamTextMatchesOnCorpus(t *testing.T) { streamTextMatches(t, corpusLayouts(t)) }

func streamTextMatches(t *testing.T, layouts map[string]*checkpoint.Layout) {
	defer func(n int) { rangeOperators = n }(rangeOperators)
	e := New()
	ctx := context.Background()
	compared := 0
	for name, l := range layouts {
		for _, plan := range []*pb.RescalePlan{{}, {DefaultParallelism: 1}, {DefaultParallelism: 3}} {
			for _, ranges := range []int{1, 1 << 30} {
				rangeOperators = ranges
				opts := &pb.CheckOptions{RpcFrameSizeBytes: 64 << 10}
				whole, err := e.check(ctx, checkRun{layout: l, source: name, opts: opts, detail: SubtasksForChart}, plan)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				var want, got bytes.Buffer
				if err := report.WriteText(&want, whole); err != nil {
					t.Fatal(err)
				}
				var table report.OperatorTable
				streamed, err := e.check(ctx, checkRun{layout: l, source: name, opts: opts, detail: SubtasksForChart, each: table.Add}, plan)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if strings.HasPrefix(name, "synthetic") && plan.GetDefaultParallelism() == 0 && len(streamed.Operators) != 1 {
					t.Errorf("%s: the streamed report keeps %d of %d operators, want the charted one", name, len(streamed.Operators), len(whole.Operators))
				}
				if err := report.WriteTextTable(&got, streamed, &table); err != nil {
					t.Fatal(err)
				}
				if got.String() != want.String() {
					t.Fatalf("%s, plan %v, ranges of %d: streamed text differs\n--- streamed\n%s\n--- whole\n%s", name, plan, ranges, got.String(), want.String())
				}
				compared++
			}
		}
	}
	t.Logf("%d texts compared", compared)
}

func TestChartOperatorsIsReportsMaxCharts(t *testing.T) {
	if ChartOperators != report.MaxCharts || ChartRows != 16 {
		t.Fatalf("engine charts %d operators, report draws %d", ChartOperators, report.MaxCharts)
	}
}

// TestChartsCapped: a rescale whose findings name thousands of operators charts the first
// ChartOperators of them and says so; the streamed report keeps no more than those.
func TestChartsCapped(t *testing.T) {
	_, l := scenariotest.SyntheticLayout(t, scenarios.Synthetic{Operators: 3000, Parallelism: 2, Union: 1})
	var table report.OperatorTable
	// A 256-byte frame: every operator's payload (334 bytes a subtask) is refused (PF120).
	rep, err := New().check(context.Background(), checkRun{layout: l, source: "synthetic", opts: &pb.CheckOptions{RpcFrameSizeBytes: 256}, detail: SubtasksForChart, each: table.Add}, &pb.RescalePlan{DefaultParallelism: 4})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := report.WriteTextTable(&out, rep, &table); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if n := strings.Count(text, "STATE PER SUBTASK"); n != ChartOperators {
		t.Errorf("%d charts, want %d", n, ChartOperators)
	}
	if !strings.Contains(text, "charts of the first 8 of the 3000 operators that findings name") {
		t.Errorf("no note on the charts left out:\n%s", text[max(0, len(text)-2000):])
	}
	if len(rep.Operators) > ChartOperators || table.Len() != 3000 {
		t.Errorf("the report keeps %d operators, the table %d rows", len(rep.Operators), table.Len())
	}
}

// TestCheckInPieces: the operators a check hands to Request.Pieces, their parts joined as the
// API's client joins an OperatorPage's, are those of the same check without Pieces, with and
// without include_subtasks, with subtask_operators, parts
// of one row (so that every operator with rows is continued) and of the default size; a part
// holds at most rowChunkBytes of rows and old subtasks plus one of them; an error of the receiver ends the check.
func TestCheckInPieces(t *testing.T) {
	defer func(n int) { rowChunkBytes = n }(rowChunkBytes)
	layouts := testdataLayouts(t)
	_, l := scenariotest.SyntheticLayout(t, scenarios.SyntheticUnion(64))
	layouts["union"] = l
	e, ctx := New(), context.Background()
	continuedParts := 0
	for name, l := range layouts {
		for _, chunk := range []int{1, 256 << 10} {
			for _, opts := range []*pb.CheckOptions{{}, {IncludeSubtasks: true}, {SubtaskOperators: []string{l.Operators[len(l.Operators)-1].ID.String()}}} {
				rowChunkBytes = chunk
				plan := &pb.RescalePlan{DefaultParallelism: 96}
				want, err := e.Check(ctx, Request{Layout: l, Source: name, Plan: plan, Options: opts})
				if err != nil {
					t.Fatal(err)
				}
				var ops []*pb.OperatorAssignment
				got, err := e.Check(ctx, Request{Layout: l, Source: name, Plan: plan, Options: opts, Pieces: func(op *pb.OperatorAssignment, continued bool) error {
					// The rows, then the old subtasks, are cut into chunks: a part holds less
					// than chunk bytes of them before its last one.
					rows, lastRow := 0, 0
					for _, st := range op.GetSubtasks() {
						lastRow = proto.Size(st)
						rows += lastRow
					}
					for _, o := range op.GetOldSubtasks() {
						lastRow = proto.Size(o)
						rows += lastRow
					}
					if rows-lastRow >= chunk {
						t.Errorf("%s: a part of %d bytes of rows and old subtasks", name, rows)
					}
					if !continued {
						ops = append(ops, op)
						return nil
					}
					continuedParts++
					last := ops[len(ops)-1]
					if op.GetOperatorId() != last.GetOperatorId() {
						t.Fatalf("%s: a part of %s continues %s", name, op.GetOperatorId(), last.GetOperatorId())
					}
					last.Subtasks = append(last.Subtasks, op.Subtasks...)
					last.OldSubtasks = append(last.OldSubtasks, op.OldSubtasks...)
					return nil
				}})
				if err != nil {
					t.Fatal(err)
				}
				if len(got.GetOperators()) > 0 {
					t.Errorf("%s: the report kept %d operators", name, len(got.GetOperators()))
				}
				got.Operators = ops
				if !proto.Equal(got, want) {
					t.Errorf("%s, chunk %d, options %v: the joined report differs from the check's without Pieces", name, chunk, opts)
				}
			}
		}
	}
	if continuedParts == 0 {
		t.Error("no operator was handed on in several parts")
	}
	stop := errors.New("the receiver stops")
	if _, err := e.Check(ctx, Request{Layout: l, Source: "union", Plan: &pb.RescalePlan{DefaultParallelism: 96}, Options: &pb.CheckOptions{IncludeSubtasks: true},
		Pieces: func(*pb.OperatorAssignment, bool) error { return stop }}); !errors.Is(err, stop) {
		t.Errorf("a receiver's error: the check returned %v", err)
	}
}
